/**
 * Hunter: the email finder (name + domain or company → email) and the email verifier, two
 * providers with one key (`HUNTER_API_KEY`, sent as `X-API-KEY`) and their own documented limits.
 * Failed lookups are free at Hunter, and here.
 */
import { textOf, type EmailStatus, type ProviderFields } from './fields.ts';
import type { HttpAnswer } from './http.ts';
import { ProviderFailure } from './provider-failure.ts';
import { confidenceOf, scored, type Provider } from './data-provider.ts';

export const HUNTER_URL = 'https://api.hunter.io';

/** Hunter's verification statuses in prospecta's terms; `unknown` and webmail say nothing. */
export function emailStatusOf(hunterStatus: unknown): EmailStatus | null {
  switch (hunterStatus) {
    case 'valid':
      return 'verified';
    case 'accept_all':
      return 'accept_all';
    case 'invalid':
    case 'disposable':
      return 'invalid';
    default:
      return null;
  }
}

function data(answer: HttpAnswer): Record<string, unknown> | null {
  // 404: nothing found; 451: the person asked Hunter not to process their data.
  if (answer.status === 404 || answer.status === 451) return null;
  if (answer.status !== 200 && answer.status !== 202) {
    const errors = (answer.body as { errors?: Array<{ details?: unknown }> } | null)?.errors;
    throw new ProviderFailure(`Hunter: ${textOf(errors?.[0]?.details) ?? `HTTP ${answer.status}`}`);
  }
  const body = (answer.body as { data?: unknown } | null)?.data;
  if (typeof body !== 'object' || body === null) throw new ProviderFailure('Hunter: unreadable answer');
  return body as Record<string, unknown>;
}

function splitName(fullName: unknown): { first_name?: string; last_name?: string; full_name?: string } {
  const name = textOf(fullName);
  return name ? { full_name: name } : {};
}

export const hunter: Provider = {
  id: 'hunter',
  name: 'Hunter email finder',
  kind: 'email',
  inputs: [
    ['fullName', 'companyDomain'],
    ['firstName', 'lastName', 'companyDomain'],
    ['fullName', 'companyName'],
  ],
  outputs: ['email', 'emailStatus', 'title', 'linkedinUrl', 'phone'],
  cost: 1,
  quality: 7,
  limits: { perSecond: 15, perMinute: 500, maxConcurrent: 5 },
  keyVariable: 'HUNTER_API_KEY',
  keyLooksLike: 'a Hunter API key: 40 letters and digits (hunter.io → API)',
  baseUrl: HUNTER_URL,
  async enrich(known, { http, signal, trace }) {
    const names =
      known.firstName && known.lastName
        ? { first_name: String(known.firstName), last_name: String(known.lastName) }
        : splitName(known.fullName);
    const answer = await http.send(
      {
        path: '/v2/email-finder',
        query: {
          ...names,
          ...(known.companyDomain ? { domain: String(known.companyDomain) } : { company: String(known.companyName) }),
        },
        headers: { 'X-API-KEY': http.key ?? '' },
      },
      signal,
      trace,
    );
    const found = data(answer);
    const email = textOf(found?.email);
    if (!found || !email) return null;
    const verification = found.verification as { status?: unknown } | null | undefined;
    const fields: ProviderFields = {
      email,
      emailStatus: emailStatusOf(verification?.status),
      title: textOf(found.position),
      linkedinUrl: textOf(found.linkedin_url),
      phone: textOf(found.phone_number),
    };
    // Hunter's `score` (0-100) is its confidence in the email it found.
    return scored(fields, confidenceOf(found.score, 100), ['email']);
  },
};

export const hunterVerifier: Provider = {
  id: 'hunter_verifier',
  name: 'Hunter email verifier',
  kind: 'email',
  inputs: [['email']],
  outputs: ['emailStatus'],
  cost: 1,
  quality: 7,
  limits: { perSecond: 10, perMinute: 300, maxConcurrent: 5 },
  keyVariable: 'HUNTER_API_KEY',
  keyLooksLike: 'a Hunter API key: 40 letters and digits (hunter.io → API)',
  baseUrl: HUNTER_URL,
  async enrich(known, { http, signal, trace }) {
    const answer = await http.send(
      { path: '/v2/email-verifier', query: { email: String(known.email) }, headers: { 'X-API-KEY': http.key ?? '' } },
      signal,
      trace,
    );
    // 202: the check is still running at Hunter; nothing to report yet, and nothing charged.
    if (answer.status === 202) return null;
    const found = data(answer);
    const status = emailStatusOf(found?.status);
    // The verifier's `score` (0-100) is how sure it is of its verdict.
    return status ? scored({ emailStatus: status }, confidenceOf(found?.score, 100)) : null;
  },
};
