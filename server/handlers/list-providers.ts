import { providerCatalog } from '../providers/registry.ts';
import type { Handler } from './types.ts';

export const listProviders: Handler<'listProviders'> = async (_input, ctx) => providerCatalog(ctx.services.config.env);
