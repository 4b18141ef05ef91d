/**
 * Turns every thrown error into the interface's `{error, message}` body. ApiErrors keep their
 * status and code; errors from the body parser and router are mapped to the codes of
 * decisions.md; anything else is a 500 `internal_error` whose details go to the log only.
 */
import { ApiError, type ErrorCode } from './errors.ts';
import { requestPath, type AppContext, type Middleware } from './state.ts';

interface HttpLikeError {
  status?: number;
  type?: string;
  expose?: boolean;
  message?: string;
}

function fromHttpError(err: HttpLikeError): ApiError | null {
  switch (err.status) {
    case 400:
      if (err.type === 'entity.parse.failed') return new ApiError(400, 'invalid_request', 'The body is not valid JSON.');
      return new ApiError(400, 'invalid_request', err.expose && err.message ? err.message : 'The request is invalid.');
    case 405:
      return new ApiError(405, 'method_not_allowed', err.message || 'Method not allowed.');
    case 413:
      return new ApiError(413, 'payload_too_large', 'The body is larger than 1 MiB.');
    case 415:
      return new ApiError(415, 'unsupported_media_type', 'Send the body as application/json.');
    case 404:
      return new ApiError(404, 'not_found', 'Not found.');
    default:
      return null;
  }
}

export function errorHandler(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const apiError = err instanceof ApiError ? err : fromHttpError(err as HttpLikeError);
      if (apiError) {
        send(ctx, apiError.status, apiError.code, apiError.message, apiError.headers);
        if (apiError.status >= 500) ctx.state.log.warn({ code: apiError.code, message: apiError.message }, 'request failed');
        return;
      }
      ctx.state.log.error({ err }, 'unexpected error');
      send(ctx, 500, 'internal_error', `Something went wrong on our side (request ${ctx.state.requestId}).`, {});
    }
  };
}

function send(ctx: AppContext, status: number, code: ErrorCode, message: string, headers: Record<string, string>) {
  if (ctx.headerSent) return;
  // An unread request body would be taken for the next request on a kept-alive connection.
  if (!ctx.req.complete) ctx.set('Connection', 'close');
  for (const [name, value] of Object.entries(headers)) ctx.set(name, value);
  ctx.status = status;
  ctx.body = { error: code, message };
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
      throw new ApiError(405, 'method_not_allowed', `${requestPath(ctx)} does not accept ${ctx.method}; use ${ctx.response.get('Allow')}.`);
    }
    if (ctx.status === 404) throw new ApiError(404, 'not_found', `No operation at ${ctx.method} ${requestPath(ctx)}.`);
  };
}
