/**
 * Sign-up when several processes race: each Subjects here has its own Members (its own cache and
 * its own in-process single flight), as two server instances on one MongoDB would, so only the
 * unique (iss, sub) index can decide.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subjectId, type VerifiedToken } from '../../../server/auth/access-tokens.ts';
import { Members } from '../../../server/auth/members.ts';
import { Subjects } from '../../../server/auth/subjects.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

const ISSUER = 'https://idp.example';
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

function instance(autoSignup = true): Subjects {
  const { store, workspaces, credits, log, config } = app.services;
  return new Subjects({ members: new Members(store, config.keyCacheSeconds * 1000), workspaces, credits, log }, autoSignup);
}

const token = (subject: string, displayName: string | null = null): VerifiedToken => ({
  issuer: ISSUER,
  subject,
  subjectId: subjectId(ISSUER, subject),
  scopes: ['credits:read'],
  displayName,
});

async function ledgerOf(workspaceId: string) {
  await app.services.credits.settled();
  return app.services.store.collection<{ _id: string; workspaceId: string; operation: string }>('ledger').find({ workspaceId }).toArray();
}

describe('sign-up racing across processes', () => {
  it('makes one workspace with one trial grant, whichever process wins', async () => {
    const instances = [instance(), instance(), instance()];
    const workspacesBefore = await app.services.workspaces.count();
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => instances[i % 3]!.workspaceOf(token('racer', 'racer@example.com'))));
    const ids = new Set(outcomes);
    expect(ids.size).toBe(1);
    const [workspaceId] = ids as Set<string>;
    expect(typeof workspaceId).toBe('string');

    expect(await app.services.workspaces.count()).toBe(workspacesBefore + 1);
    const workspace = await app.services.workspaces.get(workspaceId!);
    expect(workspace).toMatchObject({ name: 'racer@example.com', balance: 500, plan: { name: 'trial' } });
    expect((await ledgerOf(workspaceId!)).map((m) => m.operation)).toEqual(['trial_grant']);
    expect(await app.services.store.collection('members').countDocuments({ sub: 'racer' })).toBe(1);
  });

  it('a claim left behind by a process that died is completed by the next request', async () => {
    const members = new Members(app.services.store, 0);
    const claim = (await members.claim(ISSUER, 'orphaned', crypto.randomUUID()))!;
    expect(await app.services.workspaces.get(claim.workspaceId)).toBeNull();

    const workspaceId = await instance(false).workspaceOf(token('orphaned', 'Orphan'));
    expect(workspaceId).toBe(claim.workspaceId);
    expect(await app.services.workspaces.get(claim.workspaceId)).toMatchObject({ name: 'Orphan', balance: 500 });
    expect(await members.find(ISSUER, 'orphaned')).toMatchObject({ ready: true });
  });

  it('a removed subject is refused by every instance and never signed up again', async () => {
    const first = instance();
    const workspaceId = (await first.workspaceOf(token('leaver'))) as string;
    await app.services.members.remove(ISSUER, 'leaver', workspaceId);
    const count = await app.services.workspaces.count();
    // Instances that never cached the subject: what another process sees after the removal.
    for (const subjects of [instance(), instance(false)]) {
      expect(await subjects.workspaceOf(token('leaver'))).toEqual({ code: 'no_workspace', message: expect.stringContaining('removed') });
    }
    expect(await app.services.workspaces.count()).toBe(count);
  });
});
