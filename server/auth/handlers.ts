import { ServiceError } from '../lib/errors.ts';
import type { Handler } from '../invocation/handler.ts';
import type { ApiKeys } from './keys.ts';
import { createMemberKey } from './member-removal.ts';
import type { Members } from './members.ts';

/** The workspace's API keys, as the dashboard manages them. */
export function createKeyHandlers({ keys, members }: { keys: ApiKeys; members: Members }) {
  const listApiKeys: Handler<'listApiKeys'> = async (_input, ctx) => ({ keys: await keys.list(ctx.workspaceId) });

  const createApiKey: Handler<'createApiKey'> = async ({ name }, ctx) => {
    const memberId = ctx.principal?.memberId;
    const key = memberId ? await createMemberKey({ keys, members }, ctx.workspaceId, memberId, name) : await keys.create(ctx.workspaceId, undefined, name);
    if (!key) throw new ServiceError('unauthorized', 'Your membership of this workspace was removed: your dashboard session has ended.');
    ctx.log.info({ keyId: key.keyId }, 'api key created on the dashboard');
    return key;
  };

  const revokeApiKey: Handler<'revokeApiKey'> = async ({ keyId }, ctx) => {
    const revocation = await keys.revoke(ctx.workspaceId, keyId);
    if (revocation.outcome === 'not_found') throw new ServiceError('not_found', 'This workspace has no such key.');
    if (revocation.outcome === 'already_revoked') {
      throw new ServiceError('already_revoked', `This key was already revoked, at ${revocation.revokedAt.toISOString()}.`);
    }
    ctx.log.info({ keyId }, 'api key revoked on the dashboard');
    return { keyId, revokedAt: revocation.revokedAt.toISOString() };
  };

  return { listApiKeys, createApiKey, revokeApiKey };
}
