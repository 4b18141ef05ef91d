import type { Handler } from './types.ts';

export const listProviders: Handler<'listProviders'> = async (_input, ctx) => ctx.services.providers.catalog();
