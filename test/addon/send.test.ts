/** How a chunk's requests survive the server's answers: 429 waits and retries, 5xx stays with its row, 401/402 stop. */
import { describe, expect, it } from 'vitest';
import { ProspectaClient } from '../../addon/api/client.ts';
import type { HttpPort, HttpRequest, HttpResponse } from '../../addon/api/http.ts';
import { StopJob } from '../../addon/features/errors.ts';
import { sendAll } from '../../addon/features/send.ts';

const json = (status: number, body: unknown, headers: Record<string, string> = {}): HttpResponse => ({ status, headers, body: JSON.stringify(body) });

function scripted(answers: HttpResponse[][]): HttpPort & { rounds: HttpRequest[][] } {
  const rounds: HttpRequest[][] = [];
  return {
    rounds,
    fetch: () => {
      throw new Error('not used');
    },
    fetchAll(requests) {
      rounds.push(requests);
      return answers[rounds.length - 1]!;
    },
  };
}

const client = (http: HttpPort) => new ProspectaClient(http, { baseUrl: 'https://prospecta.test', apiKey: 'service_live_x' });
const ok = { results: [], notFound: [], invalid: [], sources: [] };

describe('sendAll', () => {
  it('waits as Retry-After says after a 429, resends only those, and goes on', () => {
    const slept: number[] = [];
    const http = scripted([[json(200, ok), json(429, { error: 'rate_limited', message: 'slow down' }, { 'Retry-After': '7' })], [json(200, ok)]]);
    const out = sendAll(client(http), http, { now: () => 0, sleep: (ms) => void slept.push(ms) }, 'lookupCnpjBatch', [{ cnpjs: ['a'] }, { cnpjs: ['b'] }]);
    expect(out.map((o) => o.ok)).toEqual([true, true]);
    expect(slept).toEqual([7000]);
    expect(http.rounds.map((r) => r.length)).toEqual([2, 1]);
    expect(JSON.parse(http.rounds[1]![0]!.payload!)).toEqual({ cnpjs: ['b'] });
    // Each call has its own Idempotency-Key, and its retry sends the same one: never charged twice.
    const [a, b] = http.rounds[0]!.map((r) => r.headers['Idempotency-Key']);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(b).not.toBe(a);
    expect(http.rounds[1]![0]!.headers['Idempotency-Key']).toBe(b);
  });

  it('sends an Idempotency-Key only with the operations that take one', () => {
    const c = client(scripted([]));
    expect(c.request('lookupCnpjBatch', { cnpjs: ['a'] }).headers['Idempotency-Key']).toBeTruthy();
    expect(c.request('agentChat', { message: 'hi' }).headers['Idempotency-Key']).toBeTruthy();
    expect(c.request('getCredits', {}).headers['Idempotency-Key']).toBeUndefined();
    expect(c.request('upsertSheetRows', { sheetId: '0b7c1e38-58a4-4bd3-9d63-6f3b1b0f3b8e', rows: [] }).headers['Idempotency-Key']).toBeUndefined();
  });

  it('a 5xx stays with its row in plain words; the others answer', () => {
    const http = scripted([[json(503, { error: 'provider_unavailable', message: 'x' }), json(200, ok)]]);
    const out = sendAll(client(http), http, { now: () => 0, sleep: () => undefined }, 'lookupCnpjBatch', [{ cnpjs: ['a'] }, { cnpjs: ['b'] }]);
    expect(out[0]).toEqual({ ok: false, error: 'The server had a problem (provider_unavailable). Try again shortly.' });
    expect(out[1]!.ok).toBe(true);
  });

  it('a fetch that gets no answer is a network failure for each of its rows', () => {
    const http: HttpPort = {
      fetch: () => {
        throw new Error('not used');
      },
      fetchAll: () => {
        throw new Error('Exception: DNS error: prospecta.test');
      },
    };
    const out = sendAll(client(http), http, { now: () => 0, sleep: () => undefined }, 'lookupCnpjBatch', [{ cnpjs: ['a'] }, { cnpjs: ['b'] }]);
    expect(out).toEqual(Array(2).fill({ ok: false, error: 'Could not reach the prospecta server (Exception: DNS error: prospecta.test). Check the server URL in Settings.' }));
  });

  it('a refused key or an empty balance stops the run', () => {
    for (const [status, code] of [
      [401, 'unauthorized'],
      [402, 'insufficient_credits'],
    ] as const) {
      const http = scripted([[json(status, { error: code, message: 'no' })]]);
      expect(() => sendAll(client(http), http, { now: () => 0, sleep: () => undefined }, 'lookupCnpjBatch', [{ cnpjs: ['a'] }])).toThrow(StopJob);
    }
  });
});
