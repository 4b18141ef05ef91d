/**
 * Whether a principal kept for later work (a job runs items for minutes or days after the request
 * that started it) may still act: its API key not revoked, the member it acts as not removed. Read
 * from the store, not from the credential caches, so a revocation or removal on any instance
 * stops the work at once, as it refuses the credential's next request.
 */
import type { ApiKeys } from './keys.ts';
import type { Members } from './members.ts';
import type { Principal } from '../invocation/caller.ts';

export type StillActing = (principal: Principal) => Promise<boolean>;

export function stillActingOf(deps: { keys: ApiKeys; members: Members }): StillActing {
  return async (principal) => {
    if (principal.kind === 'api_key' && !(await deps.keys.isActive(principal.credentialId, principal.workspaceId))) return false;
    if (principal.memberId !== undefined && !(await deps.members.isActive(principal.memberId, principal.workspaceId))) return false;
    return true;
  };
}
