import type { Handler } from './types.ts';

export const getHealth: Handler<'getHealth'> = async (_input, ctx) => ({
  status: 'ok',
  version: ctx.services.version,
  store: ctx.services.store.kind,
});
