/**
 * Members without automatic sign-up: an operator links subjects with `member add`, lists and
 * removes them, in process (the functions the control socket runs) and through the real CLI
 * reaching a running server.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { subjectKey, type MemberDoc } from '../../../server/auth/members.ts';
import { runCommand } from '../../../server/cli/control.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../../helpers/authorization-server.ts';
import { eventually } from '../../helpers/eventually.ts';
import { runCli, startServer } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const PUBLIC_URL = 'https://prospecta.example';
let as: AuthorizationServer;
let app: TestApp;

const member = (command: string, args: Record<string, string>) => runCommand(app.services, { command: `member ${command}`, args });

beforeAll(async () => {
  as = await startAuthorizationServer({ resource: `${PUBLIC_URL}/mcp`, clients: { frank: {}, grace: {}, heidi: {}, ivan: {} } });
  app = await startTestApp({ PUBLIC_URL, OAUTH_ISSUER: as.issuer, OAUTH_AUTO_SIGNUP: 'false' });
});
afterAll(() => app.close());

describe('without automatic sign-up', () => {
  it('an unknown subject is 403 no_workspace, and no workspace is made', async () => {
    const before = await app.services.workspaces.count();
    const res = await app.request('GET', '/v1/api/credits', { key: await as.token('frank', ['credits:read']) });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'no_workspace', message: expect.stringContaining('prospecta member add') });
    expect(await app.services.workspaces.count()).toBe(before);
  });

  it('member add links the subject at once; its tokens act for that workspace and are charged there', async () => {
    const frank = await as.token('frank', ['credits:read']);
    expect((await app.request('GET', '/v1/api/credits', { key: frank })).status).toBe(403); // and remembered a moment

    const { workspaceId } = await app.workspace();
    await app.services.credits.debit(workspaceId, 5, 'test', 'spent before frank joined');
    const added = await member('add', { workspace: workspaceId, subject: 'frank' });
    expect(added).toEqual({
      ok: true,
      result: {
        memberId: expect.any(String),
        issuer: as.issuer,
        subject: 'frank',
        workspaceId,
        source: 'cli',
        createdAt: expect.any(String),
        removedAt: null,
      },
    });
    const res = await app.request('GET', '/v1/api/credits', { key: frank });
    expect(res.status).toBe(200);
    expect(res.body.balance).toBe(495);
  });

  it('member list shows the workspace’s members, removed ones with removedAt', async () => {
    const { workspaceId } = await app.workspace();
    await member('add', { workspace: workspaceId, subject: 'grace' });
    await member('add', { workspace: workspaceId, subject: 'heidi', issuer: 'https://other-issuer.example' });
    await member('remove', { workspace: workspaceId, subject: 'heidi', issuer: 'https://other-issuer.example' });
    const listed = await member('list', { workspace: workspaceId });
    expect(listed).toEqual({
      ok: true,
      result: {
        workspaceId,
        members: [
          expect.objectContaining({ subject: 'grace', issuer: as.issuer, removedAt: null }),
          expect.objectContaining({ subject: 'heidi', issuer: 'https://other-issuer.example', removedAt: expect.any(String) }),
        ],
      },
    });
  });

  it('member remove refuses the subject’s tokens at once, even one just verified', async () => {
    const { workspaceId } = await app.workspace();
    await member('add', { workspace: workspaceId, subject: 'grace' }).then((r) => expect(r.ok).toBe(false)); // grace is elsewhere
    await member('add', { workspace: workspaceId, subject: 'ivan' });
    const ivan = await as.token('ivan', ['credits:read']);
    expect((await app.request('GET', '/v1/api/credits', { key: ivan })).status).toBe(200);

    expect(await member('remove', { workspace: workspaceId, subject: 'ivan' })).toMatchObject({ ok: true, result: { removed: true } });
    const res = await app.request('GET', '/v1/api/credits', { key: ivan });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('no_workspace');
  });

  it('refuses bad usage with a message, changing nothing', async () => {
    const { workspaceId } = await app.workspace();
    const elsewhere = (await app.services.members.find(as.issuer, 'grace'))!.workspaceId;
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ['add', { workspace: workspaceId }, /--subject is required/],
      ['add', { subject: 'x' }, /--workspace is required/],
      ['add', { workspace: crypto.randomUUID(), subject: 'x' }, /workspace .* not found/],
      ['add', { workspace: workspaceId, subject: 'grace' }, new RegExp(`member of workspace ${elsewhere}; remove it there first`)],
      ['remove', { workspace: workspaceId, subject: 'nobody' }, /is not a member of workspace/],
      ['remove', { workspace: workspaceId, subject: 'grace' }, /is not a member of workspace/],
    ];
    for (const [command, args, message] of cases) {
      const reply = await member(command, args);
      expect(reply, `${command} ${JSON.stringify(args)}`).toEqual({ ok: false, usage: true, message: expect.stringMatching(message) });
    }
    expect((await app.services.members.find(as.issuer, 'grace'))!.workspaceId).toBe(elsewhere);
  });
});

describe('without an issuer configured', () => {
  it('member add needs --issuer', async () => {
    const plain = await startTestApp();
    try {
      const { workspaceId } = await plain.workspace();
      const reply = await runCommand(plain.services, { command: 'member add', args: { workspace: workspaceId, subject: 'x' } });
      expect(reply).toEqual({ ok: false, usage: true, message: '--issuer is required when OAUTH_ISSUER is unset' });
      const given = await runCommand(plain.services, { command: 'member add', args: { workspace: workspaceId, subject: 'x', issuer: 'https://idp.example' } });
      expect(given).toMatchObject({ ok: true, result: { issuer: 'https://idp.example', subject: 'x' } });
    } finally {
      await plain.close();
    }
  });
});

describe('the prospecta CLI and a running server', () => {
  it('member add and remove reach the server at once through the control socket', async () => {
    const env = { DATA_DIR: await tempDir('members-cli'), OAUTH_ISSUER: as.issuer, OAUTH_AUTO_SIGNUP: 'false', PUBLIC_URL };
    const server = await startServer(env);
    const credits = (token: string) => fetch(`${server.url}/v1/api/credits`, { headers: { Authorization: `Bearer ${token}` } });
    const token = await as.token('grace', ['credits:read']);
    expect((await credits(token)).status).toBe(403);

    const created = await runCli(['workspace', 'create', '--name', 'Grace Co'], env);
    const { workspaceId } = created.json;
    const added = await runCli(['member', 'add', '--workspace', workspaceId, '--subject', 'grace'], env);
    expect(added.code, added.stderr).toBe(0);
    expect(added.json).toMatchObject({ workspaceId, subject: 'grace', issuer: as.issuer });
    expect((await credits(token)).status).toBe(200);

    const listed = await runCli(['member', 'list', '--workspace', workspaceId], env);
    expect(listed.json.members).toHaveLength(1);

    const removed = await runCli(['member', 'remove', '--workspace', workspaceId, '--subject', 'grace'], env);
    expect(removed.json).toEqual({ workspaceId, issuer: as.issuer, subject: 'grace', removed: true, revokedKeys: [] });
    expect((await credits(token)).status).toBe(403);

    const again = await runCli(['member', 'remove', '--workspace', workspaceId, '--subject', 'grace'], env);
    expect(again.code).not.toBe(0);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(/^prospecta: subject grace of .* is not a member/);
  });
});

/** Null without a Redis server: the global setup has said so, and this part skips. */
const redisUrl = inject('redisUrl');

describe.skipIf(!redisUrl)('member changes across instances, through Redis', () => {
  it('are announced to the others, and an announcement drops the cached lookup', async () => {
    const ISSUER = 'https://idp.example';
    const shared = await startTestApp({ REDIS_URL: redisUrl!, OAUTH_ISSUER: ISSUER });
    const listener = new Redis(redisUrl!);
    try {
      // The listener acts as another instance would: it hears `<id> <key>` and acknowledges the id.
      const heard: string[] = [];
      const acker = new Redis(redisUrl!);
      await listener.subscribe('prospecta:members:changed');
      listener.on('message', (_channel: string, message: string) => {
        const [id, key] = message.split(' ');
        heard.push(key!);
        acker.publish('prospecta:cache:dropped', id!).catch(() => {}); // after the test, closed
      });
      const { workspaceId } = await shared.workspace();

      await runCommand(shared.services, { command: 'member add', args: { workspace: workspaceId, subject: 'zoe' } });
      await eventually(() => expect(heard).toEqual([subjectKey(ISSUER, 'zoe')]), { message: 'the addition to be announced' });

      // Another instance removes zoe: its store write, then its announcement.
      expect(await shared.services.members.find(ISSUER, 'zoe')).toMatchObject({ removedAt: null }); // now cached here
      await shared.services.store.collection<MemberDoc>('members').updateOne({ iss: ISSUER, sub: 'zoe' }, { $set: { removedAt: new Date() } });
      expect(await shared.services.members.find(ISSUER, 'zoe')).toMatchObject({ removedAt: null }); // still the cached lookup
      const publisher = new Redis(redisUrl!);
      await publisher.publish('prospecta:members:changed', `an-id ${subjectKey(ISSUER, 'zoe')}`);
      publisher.disconnect();
      acker.disconnect();
      await eventually(async () => expect(await shared.services.members.find(ISSUER, 'zoe')).toMatchObject({ removedAt: expect.any(Date) }), {
        message: 'the announcement to drop the cached lookup',
      });
    } finally {
      listener.disconnect();
      await shared.close();
    }
  });
});
