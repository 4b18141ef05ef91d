/**
 * Issue 20: backups of the embedded store. `backup` writes a consistent copy through the running
 * server; `restore` refuses a store in use, checks the file before replacing anything, and the
 * restored store starts with exactly what the backup held.
 */
import { copyFile, readdir, readFile, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, startServer, stopChild } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

describe('backup and restore of the embedded store', () => {
  it('backs up a running server under writes, refuses to restore over it, and restores once it stops', { timeout: 90_000 }, async () => {
    const dataDir = join(await tempDir('backup'), 'data');
    const env = { DATA_DIR: dataDir };
    const server = await startServer(env);
    const before = await runCli(['workspace', 'create', '--name', 'Before the backup'], env);
    expect(before.code, before.stderr).toBe(0);

    // Writes keep arriving while the backup is taken: it holds each whole or not at all.
    const key = before.json.apiKey as string;
    let writing = true;
    const writes = (async () => {
      let n = 0;
      while (writing) {
        const res = await fetch(`${server.url}/v1/api/prospecting/templates`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: `t${n++}`, offering: 'x' }),
        });
        expect(res.status).toBe(201);
      }
      return n;
    })();
    const file = join(await tempDir('backup'), 'store.jsonl');
    const backup = await runCli(['backup', '--out', file], env);
    writing = false;
    await writes;
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.json).toMatchObject({ path: file, documents: expect.any(Number), bytes: (await stat(file)).size });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, 'utf8')).toContain('Before the backup');
    const again = await runCli(['backup', '--out', file], env);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/exists/);

    const after = await runCli(['workspace', 'create', '--name', 'After the backup'], env);
    expect(after.code).toBe(0);

    const refused = await runCli(['restore', '--from', file], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/in use by process .*Nothing was changed/s);

    await stopChild(server.child);
    const filesBefore = (await readdir(dataDir)).sort();

    // A damaged backup is refused before anything is replaced.
    const damaged = join(await tempDir('backup'), 'damaged.jsonl');
    await copyFile(file, damaged);
    await truncate(damaged, Math.floor((await stat(damaged)).size / 2));
    const bad = await runCli(['restore', '--from', damaged], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/not a usable backup: .*Nothing was changed/);
    expect((await readdir(dataDir)).sort()).toEqual(filesBefore);

    const restored = await runCli(['restore', '--from', file], env);
    expect(restored.code, restored.stderr).toBe(0);
    // Both count the same collections and documents (backup used to count empty collections too).
    expect(restored.json).toMatchObject({ restoredFrom: file, collections: backup.json.collections, documents: backup.json.documents });

    // The restored store has what the backup held, and not what came after.
    const beforeKeys = await runCli(['key', 'list', '--workspace', before.json.workspaceId], env);
    expect(beforeKeys.code, beforeKeys.stderr).toBe(0);
    const afterKeys = await runCli(['key', 'list', '--workspace', after.json.workspaceId], env);
    expect(afterKeys.stderr).toMatch(/not found/);
    const restarted = await startServer(env);
    const credits = await fetch(`${restarted.url}/v1/api/credits`, { headers: { Authorization: `Bearer ${key}` } });
    expect(credits.status).toBe(200);
  });

  it('never follows a symlink at FILE.tmp, and restore refuses a backup edited since (a balance changed)', { timeout: 90_000 }, async () => {
    const dir = await tempDir('backup');
    const env = { DATA_DIR: join(dir, 'data') };
    const workspace = await runCli(['workspace', 'create', '--name', 'Edited'], env);
    expect(workspace.code, workspace.stderr).toBe(0);

    // Someone who can write beside the backup plants FILE.tmp pointing at a file it wants overwritten.
    const victim = join(dir, 'victim.txt');
    await writeFile(victim, 'keep me');
    const file = join(dir, 'store.jsonl');
    await symlink(victim, `${file}.tmp`);
    const planted = await runCli(['backup', '--out', file], env);
    expect(planted.code).toBe(1);
    expect(planted.stderr).toBe(`prospecta: ${file}.tmp exists (a file, or a symlink): nothing was written. Remove it, or choose another --out\n`);
    expect(await readFile(victim, 'utf8')).toBe('keep me');

    const other = join(dir, 'other.jsonl');
    const backup = await runCli(['backup', '--out', other], env);
    expect(backup.code, backup.stderr).toBe(0);
    const text = await readFile(other, 'utf8');
    expect(text).toMatch(/"sha256":"[0-9a-f]{64}"\}\n$/);
    const edited = join(dir, 'edited.jsonl');
    const richer = text.replace(/"balance":500\b/, '"balance":900');
    expect(richer).not.toBe(text);
    await writeFile(edited, richer);
    const filesBefore = (await readdir(env.DATA_DIR)).sort();
    const refused = await runCli(['restore', '--from', edited], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/^prospecta: .*edited\.jsonl is not a usable backup: its contents do not match its checksum .*Nothing was changed\.\n$/);
    expect((await readdir(env.DATA_DIR)).sort()).toEqual(filesBefore);
    expect((await runCli(['restore', '--from', other], env)).code).toBe(0);
  });
});
