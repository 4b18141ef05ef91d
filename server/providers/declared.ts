/**
 * Every data provider prospecta can call. Adding one is a file in this folder and a line here;
 * the catalog, the throttles, the cascade and the configuration variables follow from it.
 */
import { PROVIDER_IDS } from '../../shared/schemas/enrichment.ts';
import type { Companies } from '../companies/companies.ts';
import type { BrasilApiSource } from './brasilapi-client.ts';
import { apollo } from './apollo.ts';
import { brasilApi } from './brasilapi.ts';
import { hunter, hunterVerifier } from './hunter.ts';
import { peopleDataLabs } from './people-data-labs.ts';
import type { LocalProvider, Provider, ProviderDeclaration } from './data-provider.ts';
import { receitaFederal } from './receita-federal.ts';

/** The company lookups the local providers' adapters are built with. */
export interface ProviderLookups {
  companies: Pick<Companies, 'byCnpj'>;
  remoteCompanies: BrasilApiSource | null;
}

const entries: ReadonlyArray<Provider | LocalProvider<ProviderLookups>> = [
  receitaFederal,
  brasilApi,
  apollo,
  hunter,
  hunterVerifier,
  peopleDataLabs,
];

const isLocal = (entry: Provider | LocalProvider<ProviderLookups>): entry is LocalProvider<ProviderLookups> => 'build' in entry;

/** What each provider is, known before anything is opened (configuration reads it). */
export const declarations: readonly ProviderDeclaration[] = entries.map((e) => (isLocal(e) ? e.declaration : e));

/** The providers ready to call, the local ones reading these lookups. */
export function buildProviders(lookups: ProviderLookups): Provider[] {
  return entries.map((e) => (isLocal(e) ? e.build(lookups) : e));
}

// The contract's vocabulary of `providerOrder` names exactly these, in this order.
if (declarations.map((p) => p.id).join() !== PROVIDER_IDS.join()) {
  throw new Error('shared PROVIDER_IDS and the provider list disagree');
}
