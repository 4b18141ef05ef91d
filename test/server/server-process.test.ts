import { describe, expect, it } from 'vitest';
import { controlSocketPath, sendControl } from '../../server/cli/control.ts';
import { eventually } from '../helpers/eventually.ts';
import { runCli, startServer, TEST_DEMO_SEED_COMPANIES } from '../helpers/processes.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const freshDataDir = () => tempDir('proc');

const auth = (key: string) => ({ headers: { Authorization: `Bearer ${key}` } });

describe('npm start', () => {
  it('on an empty embedded store loads the demo data and prints a working key', async () => {
    const dataDir = await freshDataDir();
    const server = await startServer({ DATA_DIR: dataDir });
    try {
      const key = /(service_live_[0-9A-Za-z]+)/.exec(server.stderr())?.[1];
      expect(key, server.stderr()).toBeDefined();
      expect(server.stderr()).toContain(`${TEST_DEMO_SEED_COMPANIES} synthetic registry companies`);
      const res = await fetch(`${server.url}/v1/api/credits`, auth(key!));
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ balance: 10_000, plan: { name: 'active' } });
      // PORT=0: the banner names the port the server got, and its sign-in link works once.
      const port = new URL(server.url).port;
      expect(server.stderr()).toContain(`http://localhost:${port}/v1/api/credits`);
      const link = /(http:\/\/localhost:\d+\/dashboard\/login\?token=[\w-]+)/.exec(server.stderr())?.[1];
      expect(link, server.stderr()).toBeDefined();
      const opened = await fetch(link!.replace('localhost', '127.0.0.1'), { redirect: 'manual' });
      expect(opened.status).toBe(200);
      const signIn = await fetch(`${server.url}/dashboard/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { Origin: server.url, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: new URL(link!).searchParams.get('token')! }).toString(),
      });
      expect(signIn.status).toBe(303);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    // A second start finds data and does not seed again.
    const again = await startServer({ DATA_DIR: dataDir });
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
    expect(again.stderr()).not.toContain('service_live_');
    // A new sign-in link at every start.
    expect(again.stderr()).toContain('/dashboard/login?token=');
  });

  it('NODE_ENV=production loads no demo data and prints or logs no key or sign-in link', async () => {
    const dataDir = await freshDataDir();
    const server = await startServer({ DATA_DIR: dataDir, NODE_ENV: 'production', LOG_LEVEL: 'info' });
    try {
      expect(server.stderr() + server.stdout()).not.toMatch(/service_live_|token=|demo/i);
      // Through the server's control socket, as an operator would look.
      const listed = await runCli(['workspace', 'list'], { DATA_DIR: dataDir });
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.json).toEqual({ workspaces: [] });
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('refuses a second server on the same DATA_DIR with a clear message', async () => {
    const dataDir = await freshDataDir();
    const first = await startServer({ DATA_DIR: dataDir });
    try {
      await expect(startServer({ DATA_DIR: dataDir })).rejects.toThrow(/in use by another server process/);
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
  });

  it('SIGTERM finishes in-flight requests, then releases the store', async () => {
    const dataDir = await freshDataDir();
    const server = await startServer({ DATA_DIR: dataDir });
    const key = /(service_live_[0-9A-Za-z]+)/.exec(server.stderr())![1]!;
    const inFlight = Array.from({ length: 20 }, () => fetch(`${server.url}/v1/api/credits`, auth(key)));
    server.child.kill('SIGTERM');
    const statuses = (await Promise.allSettled(inFlight)).map((r) => (r.status === 'fulfilled' ? r.value.status : 0));
    expect(await server.exited).toBe(0);
    // Every request either completed or was never accepted; none was cut off mid-way with a 5xx.
    for (const s of statuses) expect([0, 200]).toContain(s);
    const cli = await runCli(['workspace', 'create', '--name', 'after stop'], { DATA_DIR: dataDir });
    expect(cli.code, cli.stderr).toBe(0);
  });

  it('SIGKILL during a stream of writes loses no acknowledged write', async () => {
    const dataDir = await freshDataDir();
    const server = await startServer({ DATA_DIR: dataDir });
    const socket = controlSocketPath(dataDir);
    const demo = (await sendControl(socket, { command: 'seed demo', args: {} })) as {
      ok: true;
      result: { workspaceId: string };
    };
    const acknowledged: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 4 }, async () => {
      while (!stop) {
        try {
          const reply = await sendControl(socket, { command: 'key create', args: { workspace: demo.result.workspaceId } });
          if (reply.ok) acknowledged.push((reply.result as { apiKey: string }).apiKey);
        } catch {
          return; // the server is gone
        }
      }
    });
    await eventually(() => expect(acknowledged.length).toBeGreaterThanOrEqual(200), { timeoutMs: 30_000, message: '200 acknowledged writes' });
    server.child.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await server.exited;

    const restarted = await startServer({ DATA_DIR: dataDir });
    try {
      const statuses = await Promise.all(
        acknowledged.map(async (key) => (await fetch(`${restarted.url}/v1/api/credits`, auth(key))).status),
      );
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
    } finally {
      restarted.child.kill('SIGTERM');
      await restarted.exited;
    }
  });
});
