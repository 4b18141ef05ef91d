/**
 * Identifies the caller from `Authorization: Bearer <key>` once per request, without failing:
 * rate limiting needs to know who is calling even on routes that need no credential. Whether the
 * caller may run an operation is the pipeline's decision (`auth/principal.ts`).
 */
import type { ApiKeys } from '../auth/keys.ts';
import type { Middleware } from './state.ts';

export function identify(keys: ApiKeys): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    if (header) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!match) {
        ctx.state.authProblem = 'The Authorization header must be "Bearer <API key>".';
      } else {
        const key = await keys.authenticate(match[1]!);
        if (key) {
          ctx.state.principal = {
            kind: 'api_key',
            credentialId: key._id,
            workspaceId: key.workspaceId,
            scopes: key.scopes,
          };
        } else {
          ctx.state.authProblem = 'The API key is invalid or has been revoked.';
        }
      }
    }
    await next();
  };
}
