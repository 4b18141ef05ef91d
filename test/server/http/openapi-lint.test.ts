/**
 * /openapi.json as client generators read it: Redocly's strictest built-in ruleset
 * (`recommended-strict`) finds nothing in it. The document is the one the server serves, read
 * over HTTP; the linter is the real CLI, run as a process.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { track } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const REDOCLY = fileURLToPath(new URL('../../../node_modules/@redocly/cli/bin/cli.js', import.meta.url));

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ PUBLIC_URL: 'https://prospecta.test' });
});
afterAll(() => app.close());

function lint(file: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = track(
      spawn(process.execPath, [REDOCLY, 'lint', '--extends', 'recommended-strict', '--format', 'stylish', file], {
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

it('lints clean under redocly recommended-strict, with absolute servers from PUBLIC_URL', async () => {
  const doc = (await app.request('GET', '/openapi.json')).body;
  expect(doc.servers.map((s: { url: string }) => s.url)).toEqual(['https://prospecta.test/v1', 'https://prospecta.test']);
  expect(doc.components.schemas.Error.required).toEqual(['error', 'message']);
  expect(doc.paths['/api/prospecting/templates/{templateId}'].patch.requestBody.required).toBe(false);
  // `templateId`, or `name` and `offering`: an omitted body is no valid one (issue 43).
  expect(doc.paths['/api/prospecting/campaigns'].post.requestBody.required).toBe(true);
  expect(doc.paths['/api/companies/cnpj/batch'].post.requestBody.required).toBe(true);
  const file = path.join(await tempDir('openapi'), 'openapi.json');
  await writeFile(file, JSON.stringify(doc));
  const { code, output } = await lint(file);
  expect(output.replace(/\s+$/, '').split('\n').filter((l) => /error|warning/i.test(l) && !/Deprecation|Node\.js/.test(l)), output).toEqual([]);
  expect(code, output).toBe(0);
});
