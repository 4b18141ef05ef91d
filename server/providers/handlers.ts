import type { Handler } from '../pipeline/handler.ts';
import { REGISTRY_SOURCE } from '../companies/company-record.ts';
import type { Companies } from '../companies/companies.ts';
import { releaseView } from '../companies/releases.ts';
import type { Providers } from './providers.ts';

export function createProviderHandlers({ providers, companies }: { providers: Providers; companies: Companies }) {
  const listProviders: Handler<'listProviders'> = async () => {
    const catalog = providers.catalog();
    // Issue 22: the imported registry says which release it holds.
    const release = releaseView(await companies.releases.loaded());
    return { ...catalog, providers: catalog.providers.map((p) => (p.id === REGISTRY_SOURCE ? { ...p, release } : p)) };
  };
  return { listProviders };
}
