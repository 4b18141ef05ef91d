/**
 * Who is calling, as every binding hands it to the pipeline and the pipeline to a handler: part of
 * the handler contract. Whether a caller may run an operation is decided in `auth/principal.ts`.
 */
import type { Scope } from '../../shared/operations/types.ts';

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
