/** Runs the built server and CLI as real processes, as a user would. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// PROSPECTA_ROOT: when this file runs bundled elsewhere (bench:addon).
const root = process.env.PROSPECTA_ROOT ?? fileURLToPath(new URL('../..', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  json: any;
}

export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/prospecta.mjs', ...args], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
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
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
}

/** Starts dist/server.mjs on an ephemeral port and waits for its "listening" log line. */
export function startServer(env: Record<string, string>): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['dist/server.mjs'], {
      cwd: root,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    child.stderr!.on('data', (d) => (stderr += d));
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d;
      for (const line of stdout.split('\n')) {
        if (!line.includes('prospecta listening')) continue;
        const { address } = JSON.parse(line) as { address: { port: number } };
        resolve({ child, url: `http://127.0.0.1:${address.port}`, stderr: () => stderr, exited });
        return;
      }
    });
    void exited.then((code) => reject(new Error(`server exited with ${code} before listening:\n${stderr}`)));
  });
}

/** Starts the fake providers in their own process; resolves with the server variables that point at them. */
export async function startFakeProviderProcess(worldSize = 0): Promise<{ env: Record<string, string>; stop(): void }> {
  const { build } = await import('esbuild');
  const { mkdtemp } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const path = await import('node:path');
  const outfile = path.join(await mkdtemp(path.join(tmpdir(), 'prospecta-fakes-')), 'fakes.mjs');
  await build({ absWorkingDir: root, entryPoints: ['test/helpers/fake-providers-main.ts'], outfile, bundle: true, platform: 'node', format: 'esm', logLevel: 'warning' });
  const child = spawn(process.execPath, [outfile], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, FAKE_WORLD: String(worldSize) } });
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
