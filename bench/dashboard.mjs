// npm run bench:dashboard — Lighthouse 12 on the dashboard's Overview and API keys pages, as a
// signed-in owner sees them: the built server as its own process (a workspace with some ledger
// history and keys), Debian's Chromium driven through chrome-launcher, the session cookie of a
// one-time link passed with `extraHeaders`. Lighthouse's default run: a mid-range phone on a slow
// 4G link (simulated throttling). Prints the performance and accessibility scores, the JavaScript
// transferred (compressed, as the browser received it) and the time to interactive, against the
// targets: both scores ≥ 95, JavaScript ≤ 60 kB.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import { cli, root, startInstance } from './lib.mjs';

const LIGHTHOUSE_VERSION = JSON.parse(await readFile(path.join(root, 'node_modules/lighthouse/package.json'), 'utf8')).version;

const PAGES = [
  { name: 'Overview', path: '/dashboard' },
  { name: 'API keys', path: '/dashboard/keys' },
];
const TARGET_SCORE = 95;
const TARGET_JS_BYTES = 60 * 1024;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const work = await mkdtemp(path.join(tmpdir(), 'prospecta-bench-dashboard-'));

/** The session cookie a one-time link sets (the link is redeemed here, not in the browser). */
async function sessionCookie(url, workspaceId, env) {
  const link = await cli(['dashboard', 'link', '--workspace', workspaceId], env);
  const res = await fetch(link.url.replace(env.PUBLIC_URL, url), { redirect: 'manual' });
  const cookies = res.headers.getSetCookie().map((c) => c.split(';')[0]);
  if (res.status >= 400 || cookies.length === 0) throw new Error(`the sign-in link answered ${res.status} without a cookie`);
  return cookies.join('; ');
}

let server;
let chrome;
try {
  server = await startInstance(path.join(work, 'data'));
  const { url, env, workspaceId, call } = server;
  // Some history to draw: movements on the ledger, a few keys.
  for (let i = 0; i < 3; i++) await cli(['credits', 'grant', '--workspace', workspaceId, '--amount', String(100 * (i + 1)), '--note', `Top-up ${i + 1}`], env);
  for (const name of ['Sheets add-on', 'CRM sync', 'Nightly export']) await cli(['key', 'create', '--workspace', workspaceId, '--name', name], env);
  await call('GET', '/credits');
  const cookie = await sessionCookie(url, workspaceId, env);

  chrome = await chromeLauncher.launch({ chromePath: CHROMIUM, chromeFlags: ['--headless=new', '--no-sandbox', '--disable-gpu'] });
  const rows = [];
  for (const page of PAGES) {
    const { lhr } = await lighthouse(
      url + page.path,
      { port: chrome.port, output: 'json', logLevel: 'error', onlyCategories: ['performance', 'accessibility'], extraHeaders: { Cookie: cookie } },
    );
    if (lhr.runtimeError) throw new Error(`${page.name}: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
    if (new URL(lhr.finalDisplayedUrl).pathname !== page.path) throw new Error(`${page.name}: ended on ${lhr.finalDisplayedUrl}, not signed in?`);
    const requests = lhr.audits['network-requests'].details.items;
    const scripts = requests.filter((r) => r.resourceType === 'Script');
    rows.push({
      page: page.name,
      performance: Math.round(lhr.categories.performance.score * 100),
      accessibility: Math.round(lhr.categories.accessibility.score * 100),
      jsBytes: scripts.reduce((sum, r) => sum + r.transferSize, 0),
      jsFiles: scripts.length,
      tti: lhr.audits.interactive.numericValue,
      fcp: lhr.audits['first-contentful-paint'].numericValue,
      lcp: lhr.audits['largest-contentful-paint'].numericValue,
      tbt: lhr.audits['total-blocking-time'].numericValue,
      cls: lhr.audits['cumulative-layout-shift'].numericValue,
      si: lhr.audits['speed-index'].numericValue,
      failed: Object.values(lhr.audits)
        .filter((a) => a.score !== null && a.score < 0.9 && a.scoreDisplayMode === 'binary')
        .map((a) => a.id),
    });
  }

  const kB = (n) => `${(n / 1024).toFixed(1)} kB`;
  console.log(`Lighthouse ${LIGHTHOUSE_VERSION} (mobile, simulated slow 4G, 4x CPU slowdown), ${url}`);
  console.log('page       performance  accessibility  JS transferred        time to interactive  first paint');
  for (const r of rows) {
    console.log(
      `${r.page.padEnd(10)} ${String(r.performance).padStart(11)}  ${String(r.accessibility).padStart(13)}  ${`${kB(r.jsBytes)} (${r.jsFiles} files)`.padEnd(20)}  ${`${Math.round(r.tti)} ms`.padStart(19)}  ${`${Math.round(r.fcp)} ms`.padStart(11)}`,
    );
    console.log(`           largest paint ${Math.round(r.lcp)} ms, speed index ${Math.round(r.si)} ms, blocking ${Math.round(r.tbt)} ms, layout shift ${r.cls.toFixed(3)}`);
    if (r.failed.length) console.log(`           failing audits: ${r.failed.join(', ')}`);
  }
  const misses = rows.flatMap((r) => [
    ...(r.performance < TARGET_SCORE ? [`${r.page}: performance ${r.performance} < ${TARGET_SCORE}`] : []),
    ...(r.accessibility < TARGET_SCORE ? [`${r.page}: accessibility ${r.accessibility} < ${TARGET_SCORE}`] : []),
    ...(r.jsBytes > TARGET_JS_BYTES ? [`${r.page}: JavaScript ${kB(r.jsBytes)} > ${kB(TARGET_JS_BYTES)}`] : []),
  ]);
  console.log(misses.length ? `Targets missed:\n- ${misses.join('\n- ')}` : `Targets met: scores ≥ ${TARGET_SCORE}, JavaScript ≤ ${kB(TARGET_JS_BYTES)}.`);
  if (misses.length) process.exitCode = 1;
} finally {
  await chrome?.kill();
  await server?.stop();
  await rm(work, { recursive: true, force: true });
}
