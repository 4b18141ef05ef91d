/**
 * One record through the cascade for a workspace: which providers, in which order, within which
 * budget, and when the answer is that providers are unavailable. Shared by `POST /api/enrich`
 * and hydrate.
 */
import { ServiceError } from '../lib/errors.ts';
import { ENRICH_FIELDS, type Field, type FieldValues } from '../providers/fields.ts';
import type { ProviderSlot } from '../providers/providers.ts';
import { checkCnpj } from '../../shared/cnpj.ts';
import type { Logger } from 'pino';
import { runCascade, type Attempt, type CascadeResult } from './cascade.ts';
import { fieldWalks, type ProviderOrder } from './provider-order.ts';
import type { TraceContext } from '../lib/trace-context.ts';

export interface EnrichRequest {
  known: FieldValues;
  goalFields?: readonly Field[];
  providerOrder?: ProviderOrder;
  onlyListed?: boolean;
  /** Credits the cascade may spend. */
  budget: number;
}

/** `acme.com` from `https://www.Acme.com/about`. */
export function normalizeDomain(value: string): string {
  const host = value.trim().toLowerCase().replace(/^[a-z]+:\/\//, '').split(/[/?#]/)[0]!;
  return host.replace(/^www\./, '').replace(/:\d+$/, '');
}

/** The known fields, cleaned: a domain reduced to its host, a CNPJ to its 14 characters (or a 400). */
export function cleanKnown(known: FieldValues, field = 'cnpj'): FieldValues {
  const out: FieldValues = { ...known };
  if (typeof out.companyDomain === 'string') out.companyDomain = normalizeDomain(out.companyDomain);
  if (typeof out.email === 'string') out.email = out.email.trim().toLowerCase();
  if (typeof out.cnpj === 'string') {
    const check = checkCnpj(out.cnpj);
    if (check.status === 'malformed') {
      throw new ServiceError('invalid_cnpj', `${field} is not a CNPJ (14 characters, letters or digits then 2 check digits)`);
    }
    if (check.status === 'invalid') throw new ServiceError('invalid_cnpj', `${field} has wrong check digits`);
    out.cnpj = check.cnpj;
  }
  return out;
}

export async function enrichRecord(
  request: EnrichRequest,
  slots: Map<string, ProviderSlot>,
  { signal, log, trace }: { signal: AbortSignal; log: Logger; trace?: TraceContext },
): Promise<CascadeResult> {
  const { order, orderFor, unavailable } = fieldWalks(slots, request.providerOrder ?? { all: [], perField: {} }, request.onlyListed ?? false);
  const result = await runCascade({
    known: request.known,
    goals: request.goalFields && request.goalFields.length > 0 ? request.goalFields : ENRICH_FIELDS,
    order,
    orderFor,
    budget: request.budget,
    signal,
    trace,
    log,
  });
  result.attempts.push(...unavailable);
  return result;
}

/** Whether every provider the cascade reached failed (or was skipped for failing), none answered. */
export function allFailed(attempts: readonly Attempt[]): boolean {
  const reached = attempts.filter((a) => a.error !== 'not configured' && a.error !== 'over the credit budget');
  return reached.length > 0 && reached.every((a) => a.outcome === 'failed' || a.outcome === 'skipped');
}
