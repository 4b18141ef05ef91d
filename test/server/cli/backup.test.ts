/**
 * Issue 20, on SQLite (issue 40): backups of the embedded store. `backup` writes a consistent copy
 * (a SQLite database, its SHA-256 in FILE.sha256) while the server runs and writes; `restore`
 * refuses a store in use, checks the file whole before replacing anything (a truncated or edited
 * copy is refused), and the restored store starts with exactly what the backup held.
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
    const file = join(await tempDir('backup'), 'store.db');
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
    expect(refused.stderr).toMatch(/in use by another server process.*Nothing was changed/s);

    await stopChild(server.child);
    const filesBefore = (await readdir(dataDir)).sort();

    // A damaged backup is refused before anything is replaced.
    const damaged = join(await tempDir('backup'), 'damaged.db');
    await copyFile(file, damaged);
    await copyFile(`${file}.sha256`, `${damaged}.sha256`);
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
    const file = join(dir, 'store.db');
    await symlink(victim, `${file}.tmp`);
    const planted = await runCli(['backup', '--out', file], env);
    expect(planted.code).toBe(1);
    expect(planted.stderr).toBe(`prospecta: ${file}.tmp exists (a file, or a symlink): nothing was written. Remove it, or choose another --out\n`);
    expect(await readFile(victim, 'utf8')).toBe('keep me');

    const other = join(dir, 'other.db');
    const backup = await runCli(['backup', '--out', other], env);
    expect(backup.code, backup.stderr).toBe(0);
    expect(await readFile(`${other}.sha256`, 'utf8')).toMatch(/^[0-9a-f]{64} {2}other\.db\n$/);
    const bytes = await readFile(other);
    const at = bytes.indexOf('"balance":500');
    expect(at).toBeGreaterThan(0);
    const edited = join(dir, 'edited.db');
    bytes.write('"balance":900', at);
    await writeFile(edited, bytes);
    await copyFile(`${other}.sha256`, `${edited}.sha256`);
    // The server's lock file (which restore takes) aside, nothing changes.
    const storeFiles = async () => (await readdir(env.DATA_DIR)).filter((name) => name !== 'server.lock').sort();
    const filesBefore = await storeFiles();
    const refused = await runCli(['restore', '--from', edited], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/^prospecta: .*edited\.db is not a usable backup: its contents do not match its checksum .*Nothing was changed\.\n$/);
    expect(await storeFiles()).toEqual(filesBefore);
    expect((await runCli(['restore', '--from', other], env)).code).toBe(0);
  });

  it('says in one line, naming it, that the folder of --out does not exist or is a file', { timeout: 90_000 }, async () => {
    const dir = await tempDir('backup');
    const env = { DATA_DIR: join(dir, 'data') };
    expect((await runCli(['workspace', 'create', '--name', 'Nowhere'], env)).code).toBe(0);
    await writeFile(join(dir, 'a-file'), '');
    for (const folder of [join(dir, 'missing'), join(dir, 'a-file')]) {
      const result = await runCli(['backup', '--out', join(folder, 'b.db')], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`prospecta: ${folder} is not a folder: nothing was written. Create it, or choose another --out\n`);
    }
  });

  it('restores over a store SQLite cannot read, the case start-up sends the operator to restore for', { timeout: 90_000 }, async () => {
    const dir = await tempDir('backup');
    const env = { DATA_DIR: join(dir, 'data') };
    const workspace = await runCli(['workspace', 'create', '--name', 'Kept'], env);
    expect(workspace.code, workspace.stderr).toBe(0);
    const file = join(dir, 'kept.db');
    expect((await runCli(['backup', '--out', file], env)).code).toBe(0);

    const store = join(env.DATA_DIR, 'store.db');
    const bytes = await readFile(store);
    bytes.fill(0x41, 0, 100);
    await writeFile(store, bytes);
    const refused = await runCli(['workspace', 'list'], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`${store} is not a SQLite database or is damaged`);

    const restored = await runCli(['restore', '--from', file], env);
    expect(restored.code, restored.stderr).toBe(0);
    const listed = await runCli(['workspace', 'list'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json.workspaces).toEqual([expect.objectContaining({ workspaceId: workspace.json.workspaceId, name: 'Kept' })]);
  });
});
