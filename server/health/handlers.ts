import type { Handler } from '../invocation/handler.ts';
import type { Companies } from '../companies/companies.ts';
import { releaseView } from '../companies/releases.ts';
import type { Store } from '../store/port.ts';
import { INTERFACE_VERSION } from '../lib/version.ts';

export function createHealthHandlers({ version, store, companies }: { version: string; store: Pick<Store, 'kind'>; companies: Companies }) {
  const getHealth: Handler<'getHealth'> = async () => ({
    status: 'ok',
    version,
    interfaceVersion: INTERFACE_VERSION,
    store: store.kind,
    // A store that cannot say which release it holds still answers health.
    registry: releaseView(await companies.releases.loaded().catch(() => null)),
  });
  return { getHealth };
}
