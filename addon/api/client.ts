/**
 * The add-on's typed client, generated from the shared operation registry: the same table that
 * routes and validates on the server decides here which input fields go in the path, the query
 * or the body. Synchronous, because Apps Script is.
 */
import type { InputOf, OutputOf } from '../../shared/operations/index.ts';
import { sending, type HttpPort, type HttpRequest, type HttpResponse } from './http.ts';
import { registry, type AddonOperationId, type LimitNode } from './registry.ts';

export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds to wait before retrying, from Retry-After on a 429. */
    readonly retryAfter: number | null,
  ) {
    super(message);
  }
}

export interface ClientSettings {
  baseUrl: string;
  apiKey: string;
}

function header(headers: Record<string, string>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

/**
 * A random UUID (version 4) for an `Idempotency-Key`. Apps Script has no Web Crypto; a key needs
 * only to be unique within the workspace for a day, which Math.random's 122 bits give.
 */
export function randomKey(): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(Math.random() * 16).toString(16));
  hex[12] = '4';
  hex[16] = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export class ProspectaClient {
  constructor(
    private readonly http: HttpPort,
    private readonly settings: ClientSettings,
    private readonly newKey: () => string = randomKey,
  ) {}

  /** A key for one call, to send again with each retry of that call (`request`'s third argument). */
  idempotencyKey(): string {
    return this.newKey();
  }

  /**
   * The HTTP request for one operation, for batching with `fetchAll`. An operation that takes an
   * `Idempotency-Key` gets `idempotencyKey`: pass the same one each time the same call is sent
   * again, so the server answers the retry from the first run rather than charging it twice.
   */
  request<Id extends AddonOperationId>(id: Id, input: InputOf<Id>, idempotencyKey: string = this.newKey()): HttpRequest {
    const op = registry[id];
    const values = { ...(input as Record<string, unknown>) };
    const take = (name: string) => {
      const value = values[name];
      delete values[name];
      return value;
    };
    const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(take(name))));
    const query: string[] = [];
    for (const name of op.query) {
      const value = take(name);
      if (value !== undefined) query.push(`${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`);
    }
    const request: HttpRequest = {
      url: `${this.settings.baseUrl.replace(/\/+$/, '')}/v1${path}${query.length ? `?${query.join('&')}` : ''}`,
      method: op.method.toLowerCase() as HttpRequest['method'],
      headers: { Authorization: `Bearer ${this.settings.apiKey}`, 'Service-Version': '1' },
    };
    // UrlFetchApp cannot read a stream: an operation that can answer either way is asked for JSON.
    if (op.json) request.headers.Accept = 'application/json';
    if (op.idempotent) request.headers['Idempotency-Key'] = idempotencyKey;
    if (op.body) {
      request.headers['Content-Type'] = 'application/json';
      request.payload = JSON.stringify(values);
    }
    return request;
  }

  /** The typed body of a success, or an ApiCallError carrying the server's code and message. */
  parse<Id extends AddonOperationId>(_id: Id, response: HttpResponse): OutputOf<Id> {
    const body = jsonOf(response);
    if (response.status >= 200 && response.status < 300) return body as OutputOf<Id>;
    throw refusal(response, body);
  }

  /**
   * The text of an operation that answers a file (an export's CSV) rather than JSON; a refusal is
   * an ApiCallError as from `call`.
   */
  file<Id extends AddonOperationId>(id: Id, input: InputOf<Id>): string {
    const response = sending(() => this.http.fetch(this.request(id, input)));
    if (response.status >= 200 && response.status < 300) return response.body;
    throw refusal(response, jsonOf(response));
  }

  /** One call; `idempotencyKey` when the caller derives its own (a formula, from its input). */
  call<Id extends AddonOperationId>(id: Id, input: InputOf<Id>, idempotencyKey?: string): OutputOf<Id> {
    const request = this.request(id, input, idempotencyKey);
    return this.parse(id, sending(() => this.http.fetch(request)));
  }
}

/** A response's body as JSON; undefined when it is none. */
function jsonOf(response: HttpResponse): unknown {
  try {
    return response.body ? JSON.parse(response.body) : undefined;
  } catch {
    return undefined;
  }
}

/** The ApiCallError a refusal stands for: the server's code and message, and its Retry-After. */
function refusal(response: HttpResponse, body: unknown): ApiCallError {
  const error = (body ?? {}) as { error?: string; message?: string };
  const retryAfter = Number(header(response.headers, 'Retry-After'));
  return new ApiCallError(
    response.status,
    error.error ?? 'http_error',
    error.message ?? `The server answered ${response.status}.`,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
  );
}

/**
 * A limit the registry's schema declares for an operation's input, so the add-on splits and trims
 * its work by the interface's own limits (500 CNPJs, 25 leads, 5,000 characters a cell…). `path`
 * names a body field: property names joined by dots, `[]` for an array's items, `*` for the values
 * of a record (or of an object's other properties); an empty path is the body itself.
 */
export function limitOf(id: AddonOperationId, path: string, limit: 'maxItems' | 'maxLength' | 'maximum'): number {
  let node: LimitNode | undefined = registry[id].limits;
  for (const step of path ? path.split('.') : []) {
    if (!node) break;
    if (step === '[]') node = node.items;
    else if (step === '*') node = node.values;
    else node = node.properties?.[step];
  }
  const value = node?.[limit];
  if (value === undefined) throw new Error(`${id}.${path} declares no ${limit}`);
  return value;
}

/** The most items a body array of an operation may hold (see limitOf). */
export function maxItems(id: AddonOperationId, field: string): number {
  return limitOf(id, field, 'maxItems');
}
