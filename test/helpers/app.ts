/**
 * A fresh prospecta per test file: its own embedded store in a temp dir, the real app on an
 * ephemeral loopback port, and small helpers to create workspaces and send requests. Every answer
 * `request` receives is checked against the operation's schemas (contract.ts).
 */
import { createServer, type AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import { createApp, type AppOptions } from '../../server/start/app.ts';
import { answerClientErrors } from '../../server/http/client-error.ts';
import { bootstrap, type AppServices, type Runtime } from '../../server/start/bootstrap.ts';
import { loadConfig } from '../../server/config.ts';
import { patchBottleneckYield } from '../../server/outbound/bottleneck-yield.ts';
import type { Clock } from '../../server/outbound/clock.ts';
import type { PlanName } from '../../server/credits/plans.ts';
import { checkResponse } from './contract.ts';
import { parseEvents, type ReceivedEvent } from './sse.ts';
import { tempDir } from './temp-dir.ts';

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  /** The events of a `text/event-stream` answer, read to its end. */
  events?: ReceivedEvent[];
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  /** A raw body sent as is (with its own Content-Type header). */
  raw?: string;
  headers?: Record<string, string>;
  /** Called with the body read so far, each time more arrives (to act in the middle of a stream). */
  onText?: (textSoFar: string) => unknown;
}

export interface TestApp {
  url: string;
  services: AppServices;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  workspace(plan?: PlanName): Promise<{ workspaceId: string; apiKey: string }>;
  close(): Promise<void>;
}

export async function startTestApp(
  env: Record<string, string> = {},
  options: AppOptions & {
    dataDir?: string;
    /** The server's logger (a test reading the logs); silent by default. */
    log?: Logger;
    /** A port to listen on, when the test must know the address first (PUBLIC_URL); ephemeral by default. */
    port?: number;
    /** What calls to the outside wait on (`virtualClock()` spends no real time); the system's by default. */
    clock?: Clock;
    /** The time jobs read (leases, retention); Date.now by default. */
    jobsNow?: () => number;
  } = {},
): Promise<TestApp> {
  // As server/start/main.ts does: the tests' server calls providers as fast as the real one.
  patchBottleneckYield();
  const dataDir = options.dataDir ?? (await tempDir('test'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env });
  const log = options.log ?? pino({ level: 'silent' });
  const runtime: Runtime = await bootstrap(config, log, 'test', 'server', { clock: options.clock, jobsNow: options.jobsNow });
  const server = createApp(runtime.services, options).listen(options.port ?? 0, '127.0.0.1');
  answerClientErrors(server, log);
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    services: runtime.services,
    async request(method, urlPath, { key, body, raw, headers = {}, onText } = {}) {
      const init: RequestInit = { method, headers: { ...headers } };
      if (key) (init.headers as Record<string, string>).Authorization = `Bearer ${key}`;
      if (raw !== undefined) init.body = raw;
      else if (body !== undefined) {
        init.body = JSON.stringify(body);
        (init.headers as Record<string, string>)['Content-Type'] ??= 'application/json';
      }
      const res = await fetch(url + urlPath, init);
      const text = await readText(res, onText);
      const events = res.headers.get('content-type')?.startsWith('text/event-stream') ? parseEvents(text) : undefined;
      let parsed: unknown = text;
      try {
        parsed = text && !events ? JSON.parse(text) : text || undefined;
      } catch {
        // not JSON: keep the text, the test will say so
      }
      checkResponse(method, urlPath, res.status, parsed, events);
      return { status: res.status, headers: res.headers, body: parsed as any, ...(events ? { events } : {}) };
    },
    async workspace(plan = 'trial') {
      const ws = await runtime.services.workspaces.create('Test workspace', plan);
      await runtime.services.credits.flushPending(ws);
      const { apiKey } = await runtime.services.keys.create(ws._id);
      return { workspaceId: ws._id, apiKey };
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await runtime.close();
    },
  };
}

async function readText(res: Response, onText?: (textSoFar: string) => unknown): Promise<string> {
  if (!onText || !res.body) return res.text();
  let text = '';
  for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) {
    text += chunk;
    onText(text);
  }
  return text;
}

/** A loopback port free now, for a server whose address must be known before it starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
    probe.once('error', reject);
  });
}
