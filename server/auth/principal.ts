/**
 * Who is calling. A binding identifies the caller (HTTP from `Authorization: Bearer`, MCP the
 * same way, the agent from its own chat's credential); the pipeline decides, with `authorize`,
 * whether that caller may run an operation.
 */
import { SCOPES, type Operation, type Scope } from '../../shared/operations/types.ts';
import { ServiceError } from '../lib/errors.ts';
import type { Binding } from '../lib/metrics.ts';
import type { Caller, Principal } from '../invocation/caller.ts';

/**
 * What a dashboard session may do: everything a key may, and manage keys (`access: 'dashboard'`).
 * `id` is the session's stored hash, never the cookie.
 */
export function sessionPrincipal({ id, workspaceId, memberId }: { id: string; workspaceId: string; memberId: string | null }): Principal {
  // A prefix of the stored hash: stable for the rate limit, and not the cookie.
  const principal: Principal = { kind: 'session', credentialId: `session:${id.slice(0, 16)}`, workspaceId, scopes: [...SCOPES] };
  if (memberId) principal.memberId = memberId;
  return principal;
}

/**
 * Whether `caller` may see and call `operation` through `binding`: the one answer behind MCP's
 * `tools/list`, the agent's tools and the jobs a caller is shown, on the same test the pipeline
 * refuses a call with (`authorize`). The agent, which acts on a model's word, is never given a
 * DELETE: an instruction smuggled into a tool result finds nothing to delete with.
 */
export function mayCall(caller: Caller, operation: Pick<Operation, 'scope' | 'access' | 'method'>, binding?: Binding): boolean {
  if (binding === 'agent' && operation.method === 'DELETE') return false;
  return refusalOf(caller, operation) === null;
}

/**
 * The principal allowed to run `operation` (null for operations open to everyone), or the
 * 401/403 that says why not: no credential, a missing scope, or a dashboard-only operation
 * called with a key or token.
 */
export function authorize(caller: Caller, operation: Pick<Operation, 'scope' | 'access'>): Principal | null {
  switch (refusalOf(caller, operation)) {
    case null:
      return caller.principal;
    case 'no_credential':
      return requireCredential(caller);
    case 'dashboard_only':
      throw new ServiceError('dashboard_only', 'API keys are created, listed and revoked on the dashboard (/dashboard/keys), not with an API key or access token.');
    case 'insufficient_scope':
      throw new ServiceError('insufficient_scope', `This operation needs the ${operation.scope} scope.`, { scope: operation.scope ?? undefined });
  }
}

/** Why `caller` may not run `operation`; a name, not an error, since tool lists ask it of every operation. */
function refusalOf(caller: Caller, { scope, access }: Pick<Operation, 'scope' | 'access'>): 'no_credential' | 'dashboard_only' | 'insufficient_scope' | null {
  const { principal } = caller;
  if (access === 'dashboard') {
    if (!principal) return 'no_credential';
    return principal.kind === 'session' ? null : 'dashboard_only';
  }
  if (!scope) return null;
  if (!principal) return 'no_credential';
  return principal.scopes.includes(scope) ? null : 'insufficient_scope';
}

/** The caller's principal, or the 401 (or 403 `no_workspace`) that says why there is none. */
export function requireCredential({ principal, refused }: Caller): Principal {
  if (principal) return principal;
  if (refused) throw new ServiceError(refused.code, refused.message, { credentialRefused: true });
  throw new ServiceError(
    'unauthorized',
    'This operation needs a credential: send "Authorization: Bearer " and an API key or an OAuth access token.',
    { credentialRefused: false },
  );
}
