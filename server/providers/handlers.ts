import type { Handler } from '../pipeline/handler.ts';
import { REGISTRY_SOURCE } from '../receita/company-record.ts';
import { releaseView } from '../receita/releases.ts';

export const listProviders: Handler<'listProviders'> = async (_input, ctx) => {
  const catalog = ctx.services.providers.catalog();
  // Issue 22: the imported registry says which release it holds.
  const release = releaseView(await ctx.services.companies.releases.loaded());
  return { ...catalog, providers: catalog.providers.map((p) => (p.id === REGISTRY_SOURCE ? { ...p, release } : p)) };
};
