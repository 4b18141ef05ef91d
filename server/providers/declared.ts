/**
 * Every data provider prospecta can call. Adding one is a file in this folder and a line here;
 * the catalog, the throttles, the cascade and the configuration variables follow from it.
 */
import { PROVIDER_IDS } from '../../shared/schemas/enrichment.ts';
import { apollo } from './apollo.ts';
import { brasilApi } from './brasilapi.ts';
import { hunter, hunterVerifier } from './hunter.ts';
import { peopleDataLabs } from './people-data-labs.ts';
import type { Provider } from './provider.ts';
import { receitaFederal } from './receita-federal.ts';

export const providers: readonly Provider[] = [receitaFederal, brasilApi, apollo, hunter, hunterVerifier, peopleDataLabs];

// The contract's vocabulary of `providerOrder` names exactly these, in this order.
export const providerIds = providers.map((p) => p.id);
if (providerIds.join() !== PROVIDER_IDS.join()) throw new Error('shared PROVIDER_IDS and the provider registry disagree');
