import { readFileSync, statSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServer } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

/** The build the CLI runs (bin/prospecta.mjs imports dist/cli.mjs). */
const DIST = new URL('../../../dist/', import.meta.url).pathname;

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
    const twice = await runCli(['key', 'revoke', '--workspace', ws, '--key', key.json.keyId], env);
    expect(twice.code).toBe(1);
    expect(twice.stdout).toBe('');
    expect(twice.stderr).toBe(`prospecta: key ${key.json.keyId} was already revoked, at ${revoked.json.revokedAt}\n`);
    const after = await runCli(['key', 'list', '--workspace', ws], env);
    expect(after.json.keys.find((k: { keyId: string }) => k.keyId === key.json.keyId).revokedAt).toEqual(expect.any(String));

    const plan = await runCli(['plan', 'set', '--workspace', ws, '--plan', 'active'], env);
    expect(plan.json).toMatchObject({ workspaceId: ws, plan: 'active', expiresAt: null });

    const grant = await runCli(['credits', 'grant', '--workspace', ws, '--amount', '250', '--note', 'pilot'], env);
    expect(grant.json).toEqual({ workspaceId: ws, granted: 250, balance: 750 });

    const list = await runCli(['workspace', 'list'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.json.workspaces).toContainEqual({ workspaceId: ws, name: 'Acme', plan: 'active', balance: 750, createdAt: expect.any(String) });
  });

  it('provider-key set reads the key from stdin when --key is absent, so it stays out of shell history', async () => {
    const secretEnv = { ...env, PROVIDER_KEY_SECRET: 'ab'.repeat(32) };
    const ws = (await runCli(['workspace', 'create', '--name', 'Stdin'], secretEnv)).json.workspaceId as string;
    const key = 'a1'.repeat(20);
    const set = await runCli(['provider-key', 'set', '--workspace', ws, '--provider', 'hunter'], secretEnv, { stdin: `${key}\n` });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).not.toContain(key);
    const listed = await runCli(['provider-key', 'list', '--workspace', ws], secretEnv);
    expect(listed.json.keys).toEqual([expect.objectContaining({ provider: 'hunter' })]);
    const none = await runCli(['provider-key', 'set', '--workspace', ws, '--provider', 'hunter'], secretEnv, { stdin: '' });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^prospecta: --key is required, on the command line or as the first line of stdin/);
  });

  it('answers --help from what parsing needs: usage on stdout, exit code 0, and no npm package loaded', async () => {
    const help = await runCli(['--help'], env);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: prospecta <command> \[options\]\n(.|\n)*  backup --out FILE/);
    // What `--help` runs is dist/cli.mjs and what it imports statically: Node's own modules and
    // small chunks of ours. Each command imports what it runs on when it runs (issue 43: `--help`
    // took 2-3 s loading every command's packages first).
    const seen = new Set<string>();
    const packages: string[] = [];
    const walk = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const [, specifier] of readFileSync(path.join(DIST, file), 'utf8').matchAll(/^(?:import\s[^;]*?\sfrom\s*|import\s*)"([^"]+)";$/gm)) {
        if (specifier!.startsWith('./')) walk(specifier!.slice(2));
        else if (!specifier!.startsWith('node:')) packages.push(specifier!);
      }
    };
    walk('cli.mjs');
    expect(packages).toEqual([]);
    const bytes = [...seen].reduce((sum, file) => sum + statSync(path.join(DIST, file)).size, 0);
    expect(bytes, [...seen].join(', ')).toBeLessThan(50_000);
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

  it('says in its own words what is wrong with an argument, and what a provider key looks like', async () => {
    const workspace = (await runCli(['workspace', 'create', '--name', 'Words'], env)).json.workspaceId as string;
    const expectations: Array<[string[], RegExp]> = [
      [['credits', 'grant', '--workspace', workspace, '--amount', '-5'], /^prospecta: --amount needs a value; for a value that starts with a dash, write --amount=VALUE\n/],
      [['credits', 'grant', '--workspace', workspace, '--amount=-5'], /^prospecta: --amount must be a positive whole number of credits\n$/],
      [['key', 'list', '--bogus', 'x'], /^prospecta: unknown option --bogus\n/],
      [['provider-key', 'set', '--workspace', workspace, '--provider', 'hunter', '--key', 'short'], /does not look like a Hunter API key: 40 letters and digits/],
    ];
    for (const [args, message] of expectations) {
      const res = await runCli(args, env);
      expect(res.code, args.join(' ')).not.toBe(0);
      expect(res.stderr, args.join(' ')).toMatch(message);
    }
  });

  it('a folder that is not a release is refused in one line, without a log line or a stack', async () => {
    const empty = await tempDir('cli-empty');
    const dangling = await tempDir('cli-dangling');
    await symlink(path.join(dangling, 'gone.zip'), path.join(dangling, 'Estabelecimentos0.zip'));
    const loop = await tempDir('cli-loop');
    await symlink(path.join(loop, 'Empresas0.zip'), path.join(loop, 'Empresas0.zip'));
    for (const [dir, message] of [
      [empty, `prospecta: ${empty} holds no Estabelecimentos file (Estabelecimentos*.zip or *.ESTABELE): not a CNPJ release\n`],
      [`${empty}/nowhere`, `prospecta: ${empty}/nowhere is not a folder\n`],
      [dangling, `prospecta: ${dangling}/Estabelecimentos0.zip is a symbolic link to nothing: fix or remove it\n`],
      [loop, `prospecta: ${loop}/Empresas0.zip is a loop of symbolic links: fix or remove it\n`],
    ] as const) {
      const res = await runCli(['import', 'cnpj', '--dir', dir], env);
      expect(res.code).not.toBe(0);
      expect(res.stderr).toBe(message);
    }
  });

  it('seed demo a second time says the data was there, and gives a new key', async () => {
    const own = { DATA_DIR: await tempDir('cli-seed'), DEMO_SEED_COMPANIES: '50' };
    const first = await runCli(['seed', 'demo'], own);
    expect(first.json).toMatchObject({ created: true, companiesImported: 50 });
    const again = await runCli(['seed', 'demo'], own);
    expect(again.json).toEqual({ workspaceId: first.json.workspaceId, apiKey: expect.stringMatching(/^service_live_/), created: false, note: expect.stringMatching(/already loaded/) });
    expect(again.json.apiKey).not.toBe(first.json.apiKey);
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
