/**
 * Runs the built server and CLI as real processes, as a user would. Every process started here, or
 * passed to `track`, is stopped when the test that started it ends (test/helpers/cleanup.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deferCleanup } from './cleanup.ts';
import { eventually } from './eventually.ts';
import { tempDir } from './temp-dir.ts';

// PROSPECTA_ROOT: when this file runs bundled elsewhere (bench:addon).
const root = process.env.PROSPECTA_ROOT ?? fileURLToPath(new URL('../..', import.meta.url));

const hasExited = (child: ChildProcess) => child.pid === undefined || child.exitCode !== null || child.signalCode !== null;

/**
 * Stops `child` unless it has exited: SIGTERM, then SIGKILL if it is still there after `graceMs`
 * (a server finishing its requests and flushing its store takes well under that).
 */
export async function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (hasExited(child)) return;
  child.kill('SIGTERM');
  try {
    await eventually(() => hasExited(child), { timeoutMs: graceMs, intervalMs: 10, message: `process ${child.pid} to end after SIGTERM` });
  } catch {
    child.kill('SIGKILL');
    await eventually(() => hasExited(child), { timeoutMs: graceMs, intervalMs: 10, message: `process ${child.pid} to end after SIGKILL` });
  }
}

/** Registers `child` to be stopped when the current test (or file, from `beforeAll`) ends. */
export function track<T extends ChildProcess>(child: T): T {
  deferCleanup(() => stopChild(child));
  return child;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  json: any;
}

/** `stdin`: what the command reads on its standard input (none by default). */
export function runCli(args: string[], env: Record<string, string>, { stdin }: { stdin?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = track(
      spawn(process.execPath, ['bin/prospecta.mjs', ...args], {
        cwd: root,
        env: { ...process.env, LOG_LEVEL: 'silent', ...env },
        stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      }),
    );
    if (stdin !== undefined) child.stdin!.end(stdin);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  stderr(): string;
  /** Its log lines so far. */
  stdout(): string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
}

/**
 * The demo registry a test server imports on an empty store (DEMO_SEED_COMPANIES): a few hundred
 * companies import in a fraction of the default 5,000's time. `env` may ask for another size.
 */
export const TEST_DEMO_SEED_COMPANIES = 300;

/** Starts dist/server.mjs on an ephemeral port and waits for its "listening" log line. */
export function startServer(env: Record<string, string>): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    const child = track(
      spawn(process.execPath, ['dist/server.mjs'], {
        cwd: root,
        env: {
          ...process.env,
          PORT: '0',
          HOST: '127.0.0.1',
          LOG_LEVEL: 'info',
          DEMO_SEED_COMPANIES: String(TEST_DEMO_SEED_COMPANIES),
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let stderr = '';
    let stdout = '';
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    child.stderr!.on('data', (d) => (stderr += d));
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d;
      for (const line of stdout.split('\n')) {
        if (!line.includes('prospecta listening')) continue;
        const { address } = JSON.parse(line) as { address: { port: number } };
        resolve({ child, url: `http://127.0.0.1:${address.port}`, stderr: () => stderr, stdout: () => stdout, exited });
        return;
      }
    });
    void exited.then((code) => reject(new Error(`server exited with ${code} before listening:\n${stderr}`)));
  });
}

/** Starts the fake providers in their own process; resolves with the server variables that point at them. */
export async function startFakeProviderProcess(worldSize = 0): Promise<{ env: Record<string, string>; stop(): void }> {
  const { build } = await import('esbuild');
  const outfile = path.join(await tempDir('fakes'), 'fakes.mjs');
  await build({ absWorkingDir: root, entryPoints: ['test/helpers/fake-providers-main.ts'], outfile, bundle: true, platform: 'node', format: 'esm', logLevel: 'warning' });
  const child = track(spawn(process.execPath, [outfile], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, FAKE_WORLD: String(worldSize) } }));
  const env = await new Promise<Record<string, string>>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!));
    });
    child.on('exit', (code) => reject(new Error(`fake providers exited ${code}`)));
  });
  return { env, stop: () => void child.kill() };
}

/** `/v1/api` calls with `apiKey` to whichever server `current()` names (kill tests restart it); the JSON answer. */
export function apiOf(current: () => ServerProcess, apiKey: string) {
  return async (method: string, path: string, payload?: unknown): Promise<any> => {
    const res = await fetch(`${current().url}/v1/api${path}`, {
      method,
      headers: { Authorization: `Bearer ${apiKey}`, ...(payload ? { 'Content-Type': 'application/json' } : {}) },
      ...(payload ? { body: JSON.stringify(payload) } : {}),
    });
    return res.json();
  };
}
