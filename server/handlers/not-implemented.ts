import { ApiError } from '../http/errors.ts';
import type { HandlerContext } from './types.ts';

/** Operations whose issue has not landed yet: listed in OpenAPI, answered with 501. */
export const notImplemented = async (_input: unknown, ctx: HandlerContext): Promise<never> => {
  throw new ApiError(501, 'not_implemented', `${ctx.operationId} is not available yet.`);
};
