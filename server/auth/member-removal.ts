/**
 * Removing a member ends everything that acted as that member: its access tokens are refused
 * (the member document says removed), its dashboard sessions end on their next request (each
 * request reads the member from the store), and the API keys its sessions created are revoked.
 * Those keys belong to the workspace and stay listed for its owner, marked revoked: a removed
 * member must not keep access through a key it minted on its way out.
 */
import type { ApiKeys } from './keys.ts';
import type { MemberDoc, Members } from './members.ts';

export interface MemberRemoval {
  member: MemberDoc;
  /** Ids of the keys its sessions had created, now revoked. */
  revokedKeys: string[];
}

/** null when the subject is not an active member of the workspace. */
export async function removeMember(deps: { members: Members; keys: ApiKeys }, iss: string, sub: string, workspaceId: string): Promise<MemberRemoval | null> {
  if (!(await deps.members.remove(iss, sub, workspaceId))) return null;
  // The document is unique per subject and never deleted: the one just marked removed.
  const member = (await deps.members.fresh(iss, sub))!;
  return { member, revokedKeys: await deps.keys.revokeCreatedBy(workspaceId, member._id) };
}

/**
 * Creates a key for a member's session. Removal marks the member first and sweeps its keys after,
 * so a key created while the removal runs is caught by one side or the other: here, the member is
 * read again once the key exists, and the key revoked if the member is gone.
 */
export async function createMemberKey(deps: { members: Members; keys: ApiKeys }, workspaceId: string, memberId: string, name: string | undefined) {
  const key = await deps.keys.create(workspaceId, undefined, name, memberId);
  if (await deps.members.isActive(memberId, workspaceId)) return key;
  await deps.keys.revoke(workspaceId, key.keyId);
  return null;
}
