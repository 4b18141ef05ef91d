import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServer } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dataDir = await tempDir('cli');
  env = { DATA_DIR: dataDir };
});

describe('prospecta CLI on the embedded store', () => {
  it('manages workspaces, keys, plans and credits with JSON on stdout', async () => {
    const created = await runCli(['workspace', 'create', '--name', 'Acme'], env);
    expect(created.code, created.stderr).toBe(0);
    expect(created.json).toEqual({ workspaceId: expect.any(String), apiKey: expect.stringMatching(/^service_live_/) });
    const ws = created.json.workspaceId as string;

    const key = await runCli(['key', 'create', '--workspace', ws, '--name', ' Sheets add-on '], env);
    expect(key.json).toMatchObject({ keyId: expect.any(String), name: 'Sheets add-on', apiKey: expect.stringMatching(/^service_live_/) });

    const listed = await runCli(['key', 'list', '--workspace', ws], env);
    expect(listed.json.keys).toHaveLength(2);
    expect(listed.json.keys[1]).toMatchObject({ keyId: key.json.keyId, name: 'Sheets add-on', lastUsedAt: null });
    expect(listed.json.keys[0].name).toBe('API key');
    expect(listed.stdout).not.toContain(key.json.apiKey);

    const revoked = await runCli(['key', 'revoke', '--workspace', ws, '--key', key.json.keyId], env);
    expect(revoked.json).toEqual({ keyId: key.json.keyId, revoked: true, revokedAt: expect.any(String) });
    const after = await runCli(['key', 'list', '--workspace', ws], env);
    expect(after.json.keys.find((k: { keyId: string }) => k.keyId === key.json.keyId).revokedAt).toEqual(expect.any(String));

    const plan = await runCli(['plan', 'set', '--workspace', ws, '--plan', 'active'], env);
    expect(plan.json).toMatchObject({ workspaceId: ws, plan: 'active', expiresAt: null });

    const grant = await runCli(['credits', 'grant', '--workspace', ws, '--amount', '250', '--note', 'pilot'], env);
    expect(grant.json).toEqual({ workspaceId: ws, granted: 250, balance: 750 });
  });

  it('reports bad usage on stderr with a non-zero exit code', async () => {
    const cases: string[][] = [
      ['workspace', 'create'],
      ['workspace', 'create', '--name', 'x', '--plan', 'gold'],
      ['credits', 'grant', '--workspace', 'nope', '--amount', '5'],
      ['frobnicate'],
      ['key', 'list', '--bogus', 'x'],
    ];
    for (const args of cases) {
      const res = await runCli(args, env);
      expect(res.code, args.join(' ')).not.toBe(0);
      expect(res.stdout).toBe('');
      expect(res.stderr).toMatch(/^prospecta: /);
    }
  });

  it('while the server holds the store, commands reach it and take effect at once', async () => {
    const server = await startServer(env);
    try {
      const created = await runCli(['workspace', 'create', '--name', 'Live', '--plan', 'active'], env);
      expect(created.code, created.stderr).toBe(0);
      const { workspaceId, apiKey } = created.json;
      const ok = await fetch(`${server.url}/v1/api/credits`, { headers: { Authorization: `Bearer ${apiKey}` } });
      expect(ok.status).toBe(200);

      const keyId = (await runCli(['key', 'list', '--workspace', workspaceId], env)).json.keys[0].keyId;
      await runCli(['key', 'revoke', '--workspace', workspaceId, '--key', keyId], env);
      const refused = await fetch(`${server.url}/v1/api/credits`, { headers: { Authorization: `Bearer ${apiKey}` } });
      expect(refused.status).toBe(401);
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
  });
});
