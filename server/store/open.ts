/** Chooses the storage adapter from configuration and creates the indexes repositories declare. */
import { openEmbeddedStore } from './embedded/store.ts';
import { openMongoStore } from './mongo.ts';
import type { IndexDeclaration, Store } from './port.ts';

export interface StoreConfig {
  /** When set, MongoDB is used (and shared by every process pointing at it). */
  mongodbUri?: string | undefined;
  /** The embedded store's directory, used when there is no MongoDB URI. */
  dataDir: string;
  /** Where failures of background work (TTL sweeps) are reported. */
  onBackgroundError?: (err: Error) => void;
  /** Opened by a one-shot command (see the embedded store's `oneShot`). */
  oneShot?: boolean;
  /** Where what the embedded store did by itself at start-up (a conversion) is reported. */
  onWarning?: (message: string) => void;
  /** The indexes `ensureIndexes` will be given. */
  indexes?: IndexDeclaration[];
}

/** The declarations that apply to a store of this kind. */
const declaredOn = (kind: Store['kind'], declarations: IndexDeclaration[]) => declarations.filter(({ onlyOn }) => !onlyOn || onlyOn === kind);

export function openStore(config: StoreConfig): Promise<Store> {
  if (config.mongodbUri) {
    return openMongoStore(config.mongodbUri, undefined, config.onBackgroundError ? { onBackgroundError: config.onBackgroundError } : {});
  }
  return openEmbeddedStore(config.dataDir, {
    ...(config.onBackgroundError ? { onBackgroundError: config.onBackgroundError } : {}),
    oneShot: config.oneShot ?? false,
    ...(config.onWarning ? { onWarning: config.onWarning } : {}),
    indexes: declaredOn('embedded', config.indexes ?? []),
  });
}

/** Creates every declared index; idempotent, so it runs at every start. */
export async function ensureIndexes(store: Store, declarations: IndexDeclaration[]): Promise<void> {
  for (const { collection, keys, options } of declaredOn(store.kind, declarations)) {
    await store.collection(collection).createIndex(keys, options ?? {});
  }
}
