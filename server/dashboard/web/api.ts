/**
 * The dashboard's typed client of its JSON API: `/dashboard` + a registry path, the session
 * cookie sent by the browser, never an API key. Shapes come from the registry through type-only
 * imports (nothing of the server is bundled): `call('getCredits')` answers `OutputOf<'getCredits'>`,
 * and the route table below is checked against each entry's method and path literal.
 */
import { createParser } from 'eventsource-parser';
import type { InputOf, OperationId, Operations, OutputOf, StreamEventOf } from '../../../shared/operations/index.ts';

const BASE = '/dashboard';
export const LOGIN_PATH = '/dashboard/login';

/** The registry entries the dashboard uses, each with the method and path the registry gives it. */
const routes = {
  getCredits: { method: 'GET', path: '/api/credits' },
  listLedger: { method: 'GET', path: '/api/credits/ledger' },
  getUsage: { method: 'GET', path: '/api/credits/usage' },
  listApiKeys: { method: 'GET', path: '/api/keys' },
  createApiKey: { method: 'POST', path: '/api/keys' },
  revokeApiKey: { method: 'DELETE', path: '/api/keys/{keyId}' },
  listCampaigns: { method: 'GET', path: '/api/prospecting/campaigns' },
  getCampaign: { method: 'GET', path: '/api/prospecting/campaigns/{campaignId}' },
  updateProspect: { method: 'PATCH', path: '/api/prospecting/prospects/{prospectId}' },
  listConversations: { method: 'GET', path: '/api/agent/conversations' },
  getConversation: { method: 'GET', path: '/api/agent/conversations/{conversationId}' },
  listJobs: { method: 'GET', path: '/api/jobs' },
  getJobResults: { method: 'GET', path: '/api/jobs/{jobId}/results' },
  cancelJob: { method: 'POST', path: '/api/jobs/{jobId}/cancel' },
  listProviders: { method: 'GET', path: '/api/providers' },
  listWatches: { method: 'GET', path: '/api/watches' },
  resumeWatch: { method: 'POST', path: '/api/watches/{watchId}/resume' },
  deleteWatch: { method: 'DELETE', path: '/api/watches/{watchId}' },
} as const satisfies { [Id in OperationId]?: Pick<Operations[Id], 'method' | 'path'> };

export type Out<Id extends OperationId> = OutputOf<Id>;
export type Known = keyof typeof routes;
type Args<Id extends Known> = Record<never, never> extends InputOf<Id> ? [input?: InputOf<Id>] : [input: InputOf<Id>];

/** An answer of 400 or more: the server's `{error, message}` and the status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The session ended: the sign-in page says so; nothing else on this page can work. */
function signedOut(): never {
  location.assign(LOGIN_PATH);
  throw new ApiError(401, 'unauthorized', 'Your session has ended. Sign in again.');
}

async function errorOf(res: Response): Promise<ApiError> {
  const body = (await res.json().catch(() => null)) as { error?: unknown; message?: unknown } | null;
  const code = typeof body?.error === 'string' ? body.error : 'http_error';
  const message = typeof body?.message === 'string' ? body.message : `The server answered ${res.status} ${res.statusText}.`;
  return new ApiError(res.status, code, message);
}

/** fetch, with 401 → the sign-in page and other failures → ApiError (a network failure included). */
async function send(path: string, init: RequestInit): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(BASE + path, { credentials: 'same-origin', ...init });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'network_error', 'The server could not be reached. Check your connection and try again.');
  }
  if (res.status === 401) signedOut();
  if (!res.ok) throw await errorOf(res);
  return res;
}

/** The path with its `{name}` parameters filled from the input, and the input's other fields. */
function fill(template: string, input: Record<string, unknown>): { path: string; rest: Record<string, unknown> } {
  const rest = { ...input };
  const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = rest[name];
    delete rest[name];
    return encodeURIComponent(String(value));
  });
  return { path, rest };
}

/** Calls one registry operation: path parameters from the input, the rest as query (GET, DELETE) or JSON body. */
export async function call<Id extends Known>(id: Id, ...[input]: Args<Id>): Promise<Out<Id>> {
  const { method, path: template } = routes[id];
  const { path, rest } = fill(template, (input ?? {}) as Record<string, unknown>);
  const init: RequestInit = { method, headers: { Accept: 'application/json' } };
  let url = path;
  if (method === 'GET' || method === 'DELETE') {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(rest)) if (value !== undefined && value !== null) query.set(name, String(value));
    if ([...query].length > 0) url += `?${query}`;
  } else {
    init.body = JSON.stringify(rest);
    (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
  }
  const res = await send(url, init);
  return (await res.json()) as Out<Id>;
}

export type Session = { workspaceId: string; workspaceName: string; via: 'link' | 'oidc'; who: string | null; expiresAt: string };

/** Who is signed in (not a registry operation: the dashboard's own). */
export async function getSession(): Promise<Session> {
  const res = await send('/session', { headers: { Accept: 'application/json' } });
  return (await res.json()) as Session;
}

export type ChatEvent = StreamEventOf<'agentChat'>;

/**
 * Sends a message to the agent and hands each server-sent event to `onEvent` as it arrives
 * (`text` deltas, `tool_call`, `tool_result`, `error`, then one `done`).
 */
export async function chat(body: InputOf<'agentChat'>, onEvent: (event: ChatEvent) => void, signal?: AbortSignal): Promise<void> {
  const res = await send('/api/agent/chat', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  const parser = createParser({
    onEvent: (message) => onEvent({ event: message.event ?? 'message', data: JSON.parse(message.data) } as ChatEvent),
  });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(value);
  }
}
