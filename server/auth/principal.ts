/**
 * Who is calling. A binding identifies the caller (HTTP from `Authorization: Bearer`, MCP the
 * same way, the agent from its own chat's credential); the pipeline decides, with `authorize`,
 * whether that caller may run an operation.
 */
import type { Operation, Scope } from '../../shared/operations/types.ts';
import { ServiceError } from '../errors.ts';

export interface Principal {
  /**
   * An API key, an OAuth access token of a subject linked to the workspace, or a signed-in
   * dashboard session (which alone may manage keys).
   */
  kind: 'api_key' | 'oauth' | 'session';
  /** Stable id of the credential (the key, or the token's subject), used for rate limiting and logs. */
  credentialId: string;
  workspaceId: string;
  scopes: Scope[];
  /** The member a session signed in as (OIDC); what it creates ends with that membership. */
  memberId?: string;
}

/**
 * Why a presented credential was not turned into a principal: `unauthorized` for a bad key or
 * token, `no_workspace` for a valid token whose subject acts for no workspace (none linked and no
 * sign-up, or its membership removed). The message is for people and never quotes the credential.
 */
export interface Refusal {
  code: 'unauthorized' | 'no_workspace';
  message: string;
}

export interface Caller {
  principal: Principal | null;
  /** Why a presented credential was refused; null when none was presented (or it was accepted). */
  refused: Refusal | null;
}

export const anonymous: Caller = { principal: null, refused: null };

/**
 * The principal allowed to run `operation` (null for operations open to everyone), or the
 * 401/403 that says why not: no credential, a missing scope, or a dashboard-only operation
 * called with a key or token.
 */
export function authorize(caller: Caller, { scope, access }: Pick<Operation, 'scope' | 'access'>): Principal | null {
  if (access === 'dashboard') {
    const principal = requireCredential(caller);
    if (principal.kind !== 'session') {
      throw new ServiceError('dashboard_only', 'API keys are created, listed and revoked on the dashboard (/dashboard/keys), not with an API key or access token.');
    }
    return principal;
  }
  if (!scope) return caller.principal;
  const principal = requireCredential(caller);
  if (!principal.scopes.includes(scope)) {
    throw new ServiceError('insufficient_scope', `This operation needs the ${scope} scope.`, { scope });
  }
  return principal;
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
