import type { Handler } from './pipeline/handler.ts';

export const getHealth: Handler<'getHealth'> = async (_input, ctx) => ({
  status: 'ok',
  version: ctx.services.version,
  store: ctx.services.store.kind,
});
