/**
 * JSON bodies only, at most 1 MiB. A request that carries a body in another media type is 415
 * before any parsing; an empty body is treated as absent, so "all optional" bodies may be omitted.
 */
import { HttpMethodEnum, koaBody } from 'koa-body';
import { ServiceError } from '../errors.ts';
import type { AppContext, Middleware } from './state.ts';

export const MAX_BODY_BYTES = 1024 * 1024;
const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

function hasBody(ctx: AppContext): boolean {
  const length = ctx.get('Content-Length');
  return Boolean(ctx.get('Transfer-Encoding')) || (length !== '' && length !== '0');
}

export function jsonBody(): Middleware {
  const parse = koaBody({
    json: true,
    jsonLimit: MAX_BODY_BYTES,
    jsonStrict: false,
    urlencoded: false,
    text: false,
    multipart: false,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH],
  });
  return async (ctx, next) => {
    if (!METHODS_WITH_BODY.has(ctx.method)) return next();
    if (hasBody(ctx)) {
      if (!ctx.is('application/json', '+json')) {
        throw new ServiceError('unsupported_media_type', 'Send the body as application/json.');
      }
      const declared = Number(ctx.get('Content-Length'));
      if (declared > MAX_BODY_BYTES) throw new ServiceError('payload_too_large', 'The body is larger than 1 MiB.');
    }
    await parse(ctx as never, next);
  };
}
