/** The unauthenticated catalog: the service's health and the data providers it can call. */
import { Type } from '@sinclair/typebox';
import { ClosedObject, Nullable, StringEnum } from './common.ts';
import { ENRICH_FIELDS, PROVIDER_IDS } from './enrichment.ts';

/** Issue 22: which release of Brazil's registry is loaded, and when it was imported. */
export const RegistryRelease = ClosedObject(
  'The registry release loaded.',
  {
    release: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}$', description: 'The open-data release, `YYYY-MM`.' }),
    importedAt: Type.String({ format: 'date-time', description: 'When its import finished.' }),
    complete: Type.Boolean({ description: 'Whether every file was read whole (otherwise what could be read was imported, nothing removed).' }),
    establishments: Nullable(Type.Integer({ minimum: 0 }), 'Establishments it holds; null where not counted (an import resumed on MongoDB).'),
  },
  { title: 'RegistryRelease' },
);

export const Health = ClosedObject(
  'Health of the service.',
  {
    status: StringEnum(['ok'], { description: '`ok` while the service answers.' }),
    version: Type.String({ description: 'The build of the server (its package version).' }),
    interfaceVersion: Type.String({ description: 'The version of the documented interface, as `/openapi.json` says (`info.version`).' }),
    store: StringEnum(['embedded', 'mongodb'], { description: 'The store in use: the embedded one in DATA_DIR, or MongoDB.' }),
    registry: Nullable(RegistryRelease, 'The Receita Federal release the registry holds; null before any import.'),
  },
  { title: 'Health' },
);

const Field = StringEnum(ENRICH_FIELDS);
const perPeriod = (period: string) =>
  Nullable(Type.Number({ exclusiveMinimum: 0 }), `Calls per ${period} the service allows itself; null when the provider sets no such limit.`);

export const ProviderInfo = ClosedObject(
  'One data provider, as this server runs it.',
  {
    id: StringEnum(PROVIDER_IDS, { description: 'Its id, as `providerOrder` names it.' }),
    name: Type.String({ description: 'Its name.' }),
    kind: StringEnum(['person', 'company', 'email'], { description: 'What it enriches.' }),
    inputs: Type.Array(Type.Array(Field), {
      description: 'Sets of fields it can work from: it can run once every field of one set is known.',
    }),
    outputs: Type.Array(Field, { description: 'Fields it can return.' }),
    cost: Type.Integer({ minimum: 0, description: "Credits a call that returns data costs (0 with a workspace's own key)." }),
    configured: Type.Boolean({ description: 'Whether the service can call it (its key is set, or it needs none).' }),
    limits: ClosedObject('The throttle in use.', {
      perSecond: perPeriod('second'),
      perMinute: perPeriod('minute'),
      maxConcurrent: Type.Integer({ minimum: 1, description: 'Calls in flight at once.' }),
    }),
    keyVariable: Type.Optional(Type.String({ description: "Environment variable holding the service's key." })),
    switchVariable: Type.Optional(
      Type.String({ description: 'For an opt-in keyless provider: the variable that must be `true` before it is called.' }),
    ),
    pausedUntil: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          "While the provider's own answer (a 429 with `Retry-After`) pauses calls made with the service's key: until when. At most PROVIDER_MAX_PAUSE_SECONDS ahead.",
      }),
    ),
    release: Type.Optional(Nullable(RegistryRelease, '`receita_federal` only: the release loaded, null before any import.')),
  },
  { title: 'Provider' },
);

export const ProviderCatalog = ClosedObject(
  'The data providers and the fields on offer.',
  {
    providers: Type.Array(ProviderInfo, { description: 'Every provider, configured or not.' }),
    enrichmentFields: Type.Array(Field, { description: 'Fields at least one configured provider can return.' }),
    languageModel: ClosedObject('The language model the AI operations (AI column, research, agent) and the message writer use.', {
      configured: Type.Boolean({ description: 'Whether one is configured; without it the AI operations answer 503 `ai_unavailable` and campaigns get the built-in writer.' }),
      variable: Type.Literal('LLM_BASE_URL', { description: 'The environment variable that configures it.' }),
    }),
  },
  { title: 'ProviderCatalog' },
);
