import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProspectaClient } from '../../addon/api/client.ts';
import type { PropertiesPort } from '../../addon/features/ports.ts';
import { loadSettings, saveSettings, SettingsError, testConnection } from '../../addon/features/settings.ts';
import { controlSocketPath, sendControl } from '../../server/cli/control.ts';
import { startServer, type ServerProcess } from '../helpers/processes.ts';
import { syncHttp } from '../helpers/sync-http.ts';
import { tempDir } from '../helpers/temp-dir.ts';

function memoryProperties(): PropertiesPort & { all: Map<string, string> } {
  const all = new Map<string, string>();
  return { all, get: (k) => all.get(k) ?? null, set: (k, v) => void all.set(k, v), delete: (k) => void all.delete(k) };
}

// The add-on's HTTP is synchronous, so the server must run in another process (as it does for a
// real add-on); commands reach it through its control socket.
let server: ServerProcess;
let dataDir: string;

async function command(name: string, args: Record<string, string>): Promise<any> {
  const reply = await sendControl(controlSocketPath(dataDir), { command: name, args });
  if (!reply.ok) throw new Error(reply.message);
  return reply.result;
}

beforeAll(async () => {
  dataDir = await tempDir('addon');
  server = await startServer({ DATA_DIR: dataDir });
});
afterAll(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
});

describe('add-on settings', () => {
  it('refuses a malformed key or a non-https URL and stores nothing', () => {
    const props = memoryProperties();
    expect(() => saveSettings(props, { apiKey: 'abc', serverUrl: 'https://x.example' })).toThrow(SettingsError);
    expect(() => saveSettings(props, { apiKey: `service_live_${'a'.repeat(40)}`, serverUrl: 'http://x.example' })).toThrow(
      /https/,
    );
    expect(props.all.size).toBe(0);
  });

  it('asks for settings before testing the connection', () => {
    expect(testConnection(memoryProperties(), syncHttp())).toEqual({ ok: false, message: expect.stringContaining('Settings') });
  });

  it('"Test connection" shows the real balance and plan of the workspace', async () => {
    const { apiKey } = await command('workspace create', { name: 'Sheets user', plan: 'trial' });
    const props = memoryProperties();
    saveSettings(props, { apiKey: ` ${apiKey} `, serverUrl: `${server.url}/` });
    expect(loadSettings(props)).toEqual({ apiKey, baseUrl: server.url });
    const result = testConnection(props, syncHttp());
    expect(result.ok).toBe(true);
    expect(result.message).toMatch(/^Connected: 500 credits, trial plan until \d{4}-\d{2}-\d{2}\.$/);
  });

  it('a revoked key is reported in plain words', async () => {
    const { workspaceId, apiKey } = await command('workspace create', { name: 'Revoked' });
    const { keys } = await command('key list', { workspace: workspaceId });
    await command('key revoke', { workspace: workspaceId, key: keys[0].keyId });
    const props = memoryProperties();
    saveSettings(props, { apiKey, serverUrl: server.url });
    expect(testConnection(props, syncHttp())).toEqual({ ok: false, message: expect.stringMatching(/API key was refused/) });
  });

  it('an unreachable server is reported in plain words', () => {
    const props = memoryProperties();
    saveSettings(props, { apiKey: `service_live_${'a'.repeat(40)}`, serverUrl: 'http://127.0.0.1:1' });
    expect(testConnection(props, syncHttp()).message).toMatch(/Could not reach/);
  });
});

describe('typed client from the registry', () => {
  it('puts path params in the path, query fields in the query and the rest in the body', () => {
    const client = new ProspectaClient(syncHttp(), { baseUrl: 'https://x.example/', apiKey: 'k' });
    const list = client.request('listProspects', { campaignId: '0b8f3a4e-6c1d-4f2a-9e57-3d2c1b0a9f88', status: 'ready' });
    expect(list).toMatchObject({
      method: 'get',
      url: 'https://x.example/v1/api/prospecting/prospects?campaignId=0b8f3a4e-6c1d-4f2a-9e57-3d2c1b0a9f88&status=ready',
    });
    expect(list.payload).toBeUndefined();
    const patch = client.request('updateProspect', { prospectId: 'c41e7d2a-58b3-4a6f-8d90-1f2e3d4c5b6a', status: 'paused' });
    expect(patch.url).toBe('https://x.example/v1/api/prospecting/prospects/c41e7d2a-58b3-4a6f-8d90-1f2e3d4c5b6a');
    expect(JSON.parse(patch.payload!)).toEqual({ status: 'paused' });
    expect(patch.headers).toMatchObject({ Authorization: 'Bearer k', 'Content-Type': 'application/json' });
  });
});
