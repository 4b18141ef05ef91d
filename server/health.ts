import type { Handler } from './pipeline/handler.ts';
import { releaseView } from './receita/releases.ts';

export const getHealth: Handler<'getHealth'> = async (_input, ctx) => ({
  status: 'ok',
  version: ctx.services.version,
  store: ctx.services.store.kind,
  // A store that cannot say which release it holds still answers health.
  registry: releaseView(await ctx.services.companies.releases.loaded().catch(() => null)),
});
