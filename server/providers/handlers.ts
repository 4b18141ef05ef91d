import type { Handler } from '../pipeline/handler.ts';

export const listProviders: Handler<'listProviders'> = async (_input, ctx) => ctx.services.providers.catalog();
