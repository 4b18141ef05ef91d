/**
 * Identifies the caller from `Authorization: Bearer <key>` once per request, without failing:
 * rate limiting needs to know who is calling even on routes that need no credential. Each route
 * then calls `authorize(scope)`, which answers 401 or 403 for operations that need a scope.
 */
import type { Scope } from '../../shared/operations/types.ts';
import type { ApiKeys } from '../auth/keys.ts';
import { ServiceError } from '../errors.ts';
import type { AppContext, Middleware } from './state.ts';

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

export function authorize(ctx: AppContext, scope: Scope | null): void {
  if (!scope) return;
  const principal = ctx.state.principal;
  if (!principal) {
    const problem = ctx.state.authProblem;
    throw new ServiceError(
      'unauthorized',
      problem ?? 'This operation needs an API key: send "Authorization: Bearer service_live_…".',
      { credentialRefused: problem !== null },
    );
  }
  if (!principal.scopes.includes(scope)) {
    throw new ServiceError('insufficient_scope', `This operation needs the ${scope} scope.`, { scope });
  }
}
