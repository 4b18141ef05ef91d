/**
 * The data providers prospecta can call. Each later provider is one declaration in its own file,
 * added to `providers` below; the catalog (`GET /api/providers`) is generated from them.
 */
import { isTrue } from '../config.ts';
import { brasilApiProvider } from '../registry-data/brasilapi.ts';

export interface ProviderDeclaration {
  id: string;
  name: string;
  kind: 'person' | 'company' | 'email' | 'search';
  /** Input fields the provider can use. */
  inputs: string[];
  /** Fields it can return. */
  outputs: string[];
  /** Credits charged per call that returns data. */
  cost: number;
  /** Environment variable holding its key; null for keyless providers. */
  keyVariable: string | null;
  /** For an opt-in keyless provider: the variable that must be `true` before it is called. */
  switchVariable?: string;
}

export const providers: ProviderDeclaration[] = [brasilApiProvider];


export function providerCatalog(env: Record<string, string | undefined>) {
  const list = providers.map((p) => ({
    id: p.id,
    name: p.name,
    kind: p.kind,
    inputs: p.inputs,
    outputs: p.outputs,
    cost: p.cost,
    configured:
      (p.keyVariable === null || Boolean(env[p.keyVariable])) && (!p.switchVariable || isTrue(env[p.switchVariable])),
  }));
  const fields = [...new Set(list.filter((p) => p.configured).flatMap((p) => p.outputs))].sort();
  return { providers: list, enrichmentFields: fields };
}
