/**
 * Turns every thrown error into the interface's `{error, message}` body. ServiceErrors keep their
 * code, answered with its status (`error-status.ts`); errors from the body parser and router are
 * mapped to the codes of decisions.md; anything else is a 500 `internal_error` whose details go
 * to the log only.
 */
import { ServiceError, storeUnavailable } from '../lib/errors.ts';
import { isStoreUnavailable } from '../store/port.ts';
import { errorHeaders, STATUS_OF } from './error-status.ts';
import { setHeader, type AppContext, type Middleware } from './state.ts';

interface HttpLikeError {
  status?: number;
  type?: string;
  expose?: boolean;
  message?: string;
}

function fromHttpError(err: HttpLikeError): ServiceError | null {
  switch (err.status) {
    case 400:
      if (err.type === 'entity.parse.failed') return new ServiceError('invalid_request', 'The body is not valid JSON.');
      return new ServiceError('invalid_request', err.expose && err.message ? err.message : `The request is malformed (${err.type ?? 'bad request'}).`);
    case 405:
      return new ServiceError('method_not_allowed', err.message || 'Method not allowed.');
    case 413:
      return new ServiceError('payload_too_large', 'The body is larger than 1 MiB.');
    case 415:
      return new ServiceError('unsupported_media_type', 'Send the body as application/json.');
    case 404:
      return new ServiceError('not_found', 'Not found.');
    default:
      return null;
  }
}

/** `resourceMetadata`: the protected-resource metadata URL named in every `WWW-Authenticate`. */
export function errorHandler(resourceMetadata?: string): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      serializeJson(ctx);
    } catch (err) {
      // A store call before the pipeline (a credential lookup) may meet a database that is down too.
      const known = err instanceof ServiceError ? err : isStoreUnavailable(err) ? storeUnavailable() : fromHttpError(err as HttpLikeError);
      if (known) {
        send(ctx, known, resourceMetadata);
        if (STATUS_OF[known.code] >= 500) ctx.state.log.warn({ code: known.code, message: known.message }, 'request failed');
        return;
      }
      ctx.state.log.error({ err }, 'unexpected error');
      send(ctx, new ServiceError('internal_error', `Something went wrong on our side (request ${ctx.state.requestId}).`), resourceMetadata);
    }
  };
}

/**
 * A JSON body is serialized here, inside the handler's reach, rather than by Koa after the chain:
 * a value that cannot be serialized is then a JSON 500 like any other, and the access log sees it.
 */
function serializeJson(ctx: AppContext): void {
  const body = ctx.body as unknown;
  if (body === null || typeof body !== 'object') return;
  const proto = Object.getPrototypeOf(body);
  if (!Array.isArray(body) && proto !== Object.prototype && proto !== null) return; // streams, buffers

  const json = JSON.stringify(body);
  // The type first, as Koa's `ctx.type = 'application/json'` writes it: setting the body then
  // looks up no type of its own, and neither does this line.
  setHeader(ctx, 'Content-Type', 'application/json; charset=utf-8');
  ctx.body = json;
}

function send(ctx: AppContext, err: ServiceError, resourceMetadata?: string) {
  if (ctx.headerSent) return;
  // An unread request body would be taken for the next request on a kept-alive connection.
  if (!ctx.req.complete) ctx.set('Connection', 'close');
  ctx.set(errorHeaders(err, resourceMetadata));
  ctx.status = STATUS_OF[err.code];
  ctx.body = { error: err.code, message: err.message };
  serializeJson(ctx);
}

/**
 * Wraps the router. When no route answered, 404 `not_found`; when the path exists but not with
 * this method, the router has set 405 (or 501 for a method it does not know) and `Allow`.
 */
export function unmatchedRoutes(): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.body != null) return;
    if (ctx.status === 405 || ctx.status === 501) {
      throw new ServiceError('method_not_allowed', `${ctx.path} does not accept ${ctx.method}; use ${ctx.response.get('Allow')}.`);
    }
    if (ctx.status === 404) throw new ServiceError('not_found', `No operation at ${ctx.method} ${ctx.path}.`);
  };
}
