import type { Handler } from '../invocation/handler.ts';
import { REGISTRY_SOURCE } from '../companies/company-record.ts';
import type { Companies } from '../companies/companies.ts';
import { releaseView } from '../companies/releases.ts';
import type { Providers } from './providers.ts';

/** `modelConfigured`: whether LLM_BASE_URL is set, so clients can say the AI needs it before anyone types. */
export function createProviderHandlers({ providers, companies, modelConfigured }: { providers: Providers; companies: Companies; modelConfigured: boolean }) {
  const listProviders: Handler<'listProviders'> = async () => {
    const catalog = providers.catalog();
    // Issue 22: the imported registry says which release it holds.
    const release = releaseView(await companies.releases.loaded());
    return {
      ...catalog,
      providers: catalog.providers.map((p) => (p.id === REGISTRY_SOURCE ? { ...p, release } : p)),
      languageModel: { configured: modelConfigured, variable: 'LLM_BASE_URL' as const },
    };
  };
  return { listProviders };
}
