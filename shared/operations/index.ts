/** The registry: every operation of every area, checked once when this module loads. */
import { agentOperations } from './agent.ts';
import { aiOperations } from './ai.ts';
import { campaignOperations } from './campaigns.ts';
import { changeOperations } from './changes.ts';
import { catalogOperations } from './catalog.ts';
import { creditsOperations } from './credits.ts';
import { enrichmentOperations } from './enrichment.ts';
import { jobOperations } from './jobs.ts';
import { keyOperations } from './keys.ts';
import { prospectOperations } from './prospects.ts';
import { searchOperations } from './search.ts';
import { sheetOperations } from './sheets.ts';
import { templateOperations } from './templates.ts';
import type { InputOfOperation, Operation, OutputOfOperation, StreamEventOfOperation } from './types.ts';

type Registry = Record<string, Operation>;
type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type Merged<A extends readonly Registry[]> = {
  [K in keyof UnionToIntersection<A[number]>]: UnionToIntersection<A[number]>[K];
};

/** Like spreading the areas into one object, but a spread would silently drop an id defined twice. */
function mergeAreas<const A extends readonly Registry[]>(...areas: A): Merged<A> {
  const merged: Registry = {};
  for (const area of areas) {
    for (const [id, operation] of Object.entries(area)) {
      if (id in merged) throw new Error(`Operation registry: ${id} is defined twice`);
      merged[id] = operation;
    }
  }
  return merged as Merged<A>;
}

export const operations = mergeAreas(
  catalogOperations,
  searchOperations,
  changeOperations,
  enrichmentOperations,
  aiOperations,
  templateOperations,
  campaignOperations,
  prospectOperations,
  sheetOperations,
  creditsOperations,
  keyOperations,
  agentOperations,
  jobOperations,
);

export type Operations = typeof operations;
export type OperationId = keyof Operations;
export type InputOf<Id extends OperationId> = InputOfOperation<Operations[Id]>;
export type OutputOf<Id extends OperationId> = OutputOfOperation<Operations[Id]>;
export type StreamEventOf<Id extends OperationId> = StreamEventOfOperation<Operations[Id]>;
/** The ids of the operations that answer server-sent events. */
export type StreamOperationId = { [Id in OperationId]: Operations[Id] extends { stream: object } ? Id : never }[OperationId];

const CAMEL_CASE = /^[a-z][a-zA-Z0-9]*$/;
const PATH_PARAM = /\{([^}]+)\}/g;

/**
 * Throws, listing every problem, when two operations share a route (paths compared with their
 * parameters' names erased), a path parameter and the params schema disagree, an id is not
 * camelCase, or a dashboard-only operation would be a tool.
 */
export function checkRegistry(ops: Registry): void {
  const problems: string[] = [];
  const routes = new Map<string, string>();
  for (const [id, op] of Object.entries(ops)) {
    if (!CAMEL_CASE.test(id)) problems.push(`${id}: the id is not camelCase`);

    const route = `${op.method} ${op.path.replace(PATH_PARAM, '{}')}`;
    const other = routes.get(route);
    if (other) problems.push(`${id}: ${op.method} ${op.path} is also the route of ${other}`);
    else routes.set(route, id);

    const inPath = [...op.path.matchAll(PATH_PARAM)].map((match) => match[1] ?? '');
    const declared = Object.keys(op.request.params?.properties ?? {});
    for (const name of inPath.filter((name) => !declared.includes(name))) {
      problems.push(`${id}: path parameter {${name}} has no entry in request.params`);
    }
    for (const name of declared.filter((name) => !inPath.includes(name))) {
      problems.push(`${id}: request.params.${name} is not in the path ${op.path}`);
    }
    if (op.actsFor && op.scope !== null) problems.push(`${id}: an operation that acts for others takes their scope, not one of its own`);
    if (op.actsFor?.field && op.method !== 'POST') problems.push(`${id}: only a body can name the operation it acts for`);
    if (op.access === 'dashboard' && op.tool !== false) problems.push(`${id}: a dashboard-only operation cannot be a tool`);
    if (op.stream && !op.stream.json && op.responses[200] !== op.stream.events.page) {
      problems.push(`${id}: responses[200] is not the stream's page schema (nor declared a JSON answer)`);
    }
  }
  if (problems.length > 0) throw new Error(`Operation registry is inconsistent:\n- ${problems.join('\n- ')}`);
}

checkRegistry(operations);
