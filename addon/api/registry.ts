/**
 * What the add-on reads of the operation registry: each operation's route, whether it takes a
 * body, a query or an `Idempotency-Key`, its price, and the limits its body schema declares. Only
 * plain data: addon/build.mjs evaluates this module at build time and bundles its value, so
 * Apps Script never loads TypeBox or the schemas (about 200 KB evaluated at every execution) to
 * read a path or a price. In Node (the tests) it is computed from the registry here, the same way.
 */
import { operations, type OperationId } from '../../shared/operations/index.ts';
import { takesIdempotencyKey, type CreditRule, type HttpMethod, type Operation } from '../../shared/operations/types.ts';

/** A body schema cut down to its limits and the paths that lead to them. */
export interface LimitNode {
  properties?: Record<string, LimitNode>;
  items?: LimitNode;
  /** A record's values (patternProperties, or additionalProperties given as a schema). */
  values?: LimitNode;
  maxItems?: number;
  maxLength?: number;
  maximum?: number;
}

export interface LeanOperation {
  method: HttpMethod;
  path: string;
  /** The query parameters' names. */
  query: string[];
  body: boolean;
  /** Answers JSON instead of a stream when asked with `Accept: application/json`. */
  json: boolean;
  idempotent: boolean;
  credits: CreditRule;
  limits?: LimitNode;
}

type SchemaNode = {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  patternProperties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
} & Partial<Record<'maxItems' | 'maxLength' | 'maximum', number>>;

const LIMITS = ['maxItems', 'maxLength', 'maximum'] as const;

/** The node's limits and the children that hold some; undefined when none is left. */
function limitsOf(node: SchemaNode | undefined): LimitNode | undefined {
  if (!node || typeof node !== 'object') return undefined;
  const lean: LimitNode = {};
  for (const limit of LIMITS) if (typeof node[limit] === 'number') lean[limit] = node[limit];
  const properties = Object.entries(node.properties ?? {}).flatMap(([name, child]) => {
    const kept = limitsOf(child);
    return kept ? [[name, kept] as const] : [];
  });
  if (properties.length) lean.properties = Object.fromEntries(properties);
  const items = limitsOf(node.items);
  if (items) lean.items = items;
  const record = Object.values(node.patternProperties ?? {})[0] ?? (typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined);
  const values = limitsOf(record);
  if (values) lean.values = values;
  return Object.keys(lean).length ? lean : undefined;
}

function lean(op: Operation): LeanOperation {
  const limits = limitsOf(op.request.body as SchemaNode | undefined);
  return {
    method: op.method,
    path: op.path,
    query: Object.keys(op.request.query?.properties ?? {}),
    body: Boolean(op.request.body),
    json: Boolean(op.stream?.json),
    idempotent: takesIdempotencyKey(op),
    credits: op.credits,
    ...(limits ? { limits } : {}),
  };
}

/**
 * The operations the add-on calls, and so the only ones Code.js carries (every execution evaluates
 * it whole): the client's types refuse any other. A new feature that calls another adds it here.
 */
export const ADDON_OPERATIONS = [
  'getCredits',
  'listProviders',
  'listTemplates',
  'searchPeople',
  'searchCompanies',
  'exportCompanies',
  'searchCompanyChanges',
  'lookupCnpjBatch',
  'enrich',
  'aiColumn',
  'research',
  'hydratePeople',
  'agentChat',
  'createSheet',
  'upsertSheetRows',
  'createCampaign',
  'addProspects',
  'listProspects',
  'updateProspect',
  'startJob',
  'getJob',
  'getJobResults',
  'getJobExport',
  'cancelJob',
] as const satisfies readonly OperationId[];
export type AddonOperationId = (typeof ADDON_OPERATIONS)[number];

export const registry = Object.fromEntries(ADDON_OPERATIONS.map((id) => [id, lean(operations[id] as Operation)])) as Record<AddonOperationId, LeanOperation>;
