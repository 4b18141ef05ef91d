import { providerCatalog } from '../providers/registry.ts';
import type { Handler } from './types.ts';

export const listProviders: Handler<'listProviders'> = async () => providerCatalog(process.env);
