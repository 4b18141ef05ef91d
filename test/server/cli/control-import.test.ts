/**
 * A registry import run by the server for its command line (the control socket): a second one
 * while it runs is refused in one line, and it stops when the command line goes away.
 */
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendControl, serveControl } from '../../../server/cli/control.ts';
import { generateRelease } from '../../../server/seed/release-generator.ts';
import { loadedRelease } from '../../../server/companies/releases.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { eventually } from '../../helpers/eventually.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

let app: TestApp;
let control: net.Server;
let socketPath: string;
let release: string;

beforeAll(async () => {
  app = await startTestApp();
  const dir = await tempDir('control-import');
  socketPath = path.join(dir, 'control.sock');
  control = await serveControl(app.services, socketPath);
  release = path.join(dir, 'release');
  await generateRelease({ dir: release, establishments: 20_000, seed: 7, release: '2026-10' });
});
afterAll(async () => {
  control.close();
  await app.close();
});

/** Starts an import as the CLI would, and resolves once its first progress line has come back. */
function startImport(): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    socket.on('connect', () => socket.write(JSON.stringify({ command: 'import cnpj', args: { dir: release } }) + '\n'));
    socket.once('data', () => resolve(socket));
    socket.on('error', reject);
  });
}

describe('an import through the server', () => {
  it('refuses a second one while it runs, and stops when its command line goes away', async () => {
    const first = await startImport();
    const second = await sendControl(socketPath, { command: 'import cnpj', args: { dir: release } });
    expect(second).toEqual({ ok: false, usage: false, message: expect.stringMatching(/^an import is already running \(of .*release, since .*\): wait for it to finish, or stop its command$/) });

    // Ctrl-C on the first: the server stops it, and the next import may start.
    first.destroy();
    const nowhere = path.join(release, 'nowhere');
    await eventually(async () => {
      const reply = await sendControl(socketPath, { command: 'import cnpj', args: { dir: nowhere } });
      return reply.ok === false && /is not a folder/.test(reply.message);
    }, { message: 'the stopped import to let the next one start' });
    // It stopped before finishing, and an import run again resumes and finishes it.
    expect(await loadedRelease(app.services.store)).toBeNull();
    const again = await sendControl(socketPath, { command: 'import cnpj', args: { dir: release } });
    expect(again, JSON.stringify(again)).toMatchObject({ ok: true, result: { release: '2026-10', complete: true } });
  });
});
