/**
 * A FerretDB of a test's own, on a loopback port of its own, for the tests that stop and restart
 * the MongoDB-wire server (the shared one of the run must stay up). Stopped when the test ends.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { eventually } from './eventually.ts';
import { stopChild, track } from './processes.ts';
import { tempDir } from './temp-dir.ts';

export interface OwnFerretDb {
  uri: string;
  /** Stops it, as a crash or a restart would (SIGKILL). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

export async function startOwnFerretDb(bin: string): Promise<OwnFerretDb> {
  const dir = await tempDir('ferretdb');
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = track(
      spawn(
        bin,
        [
          '--handler=sqlite',
          `--sqlite-url=file:${join(dir, 'data')}/`,
          `--state-dir=${dir}`,
          `--listen-addr=127.0.0.1:${port}`,
          '--telemetry=disable',
          '--debug-addr=-',
          '--log-level=error',
        ],
        { stdio: 'ignore' },
      ),
    );
    await eventually(() => answers(port), { message: `FerretDB to listen on 127.0.0.1:${port}` });
  };
  const { mkdir } = await import('node:fs/promises');
  await mkdir(join(dir, 'data'), { recursive: true });
  await start();
  return {
    uri: `mongodb://127.0.0.1:${port}/prospecta_faults`,
    stop: async () => {
      if (!child) return;
      child.kill('SIGKILL');
      await stopChild(child);
    },
    start,
  };
}

export { freePort };
