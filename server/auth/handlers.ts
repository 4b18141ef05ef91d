import { ServiceError } from '../errors.ts';
import type { Handler } from '../pipeline/handler.ts';
import { createMemberKey } from './member-removal.ts';

export const listApiKeys: Handler<'listApiKeys'> = async (_input, ctx) => ({ keys: await ctx.services.keys.list(ctx.workspaceId) });

export const createApiKey: Handler<'createApiKey'> = async ({ name }, ctx) => {
  const memberId = ctx.principal?.memberId;
  const key = memberId ? await createMemberKey(ctx.services, ctx.workspaceId, memberId, name) : await ctx.services.keys.create(ctx.workspaceId, undefined, name);
  if (!key) throw new ServiceError('unauthorized', 'Your membership of this workspace was removed: your dashboard session has ended.');
  ctx.log.info({ keyId: key.keyId }, 'api key created on the dashboard');
  return key;
};

export const revokeApiKey: Handler<'revokeApiKey'> = async ({ keyId }, ctx) => {
  const revocation = await ctx.services.keys.revoke(ctx.workspaceId, keyId);
  if (revocation.outcome === 'not_found') throw new ServiceError('not_found', 'This workspace has no such key.');
  if (revocation.outcome === 'already_revoked') {
    throw new ServiceError('already_revoked', `This key was already revoked, at ${revocation.revokedAt.toISOString()}.`);
  }
  ctx.log.info({ keyId }, 'api key revoked on the dashboard');
  return { keyId, revokedAt: revocation.revokedAt.toISOString() };
};
