// npm run bench:outreach — outreach over HTTP on the embedded store, the built server in its own
// process. (1) Creating a campaign from 25 rows with the built-in writer, and with a loopback model
// answering in 300 ms (default LLM_MAX_CONCURRENT). (2) A workspace with 200 campaigns × 200
// prospects, made through the API: listing campaigns with counts per status, and listing
// prospects filtered by status.
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { importTs, pct, startInstance } from './lib.mjs';

const CAMPAIGNS = Number(process.env.CAMPAIGNS ?? 200);
const PER_CAMPAIGN = Number(process.env.PROSPECTS ?? 200);
const work = await mkdtemp(path.join(tmpdir(), 'prospecta-bench-outreach-'));

const { startFakeLlm } = await importTs('test/helpers/fake-llm.ts', work);

async function timed(runs, fn) {
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn(i);
    ms.push(performance.now() - t);
  }
  return `p50 ${pct(ms, 0.5).toFixed(1)} ms   p99 ${pct(ms, 0.99).toFixed(1)} ms   (${runs} runs)`;
}

const rows = (n) =>
  Array.from({ length: n }, (_, i) => ({
    rowId: `row-${i}`,
    values: { Name: `Person ${i} Silva`, Company: `Company ${i % 40}`, Title: i % 2 ? 'CEO' : 'Head of Sales', City: 'Recife' },
  }));
const brief = { offering: 'A scheduling platform for clinics that cuts no-shows by 30%.', senderName: 'Marina', tone: 'friendly', language: 'en' };
const ids = (from, n) => Array.from({ length: n }, (_, i) => `row-${from + i}`);

const model = await startFakeLlm(() => JSON.stringify({ connectionNote: 'Hi! Glad to connect.', emailSubject: 'Scheduling', emailBody: 'Hello, ...' }));
model.latencyMs = 300;
const instances = [];
try {
  console.log(`bench:outreach on ${cpus().length} cores, Node ${process.version}, embedded store`);
  const plain = await startInstance(path.join(work, 'plain'));
  instances.push(plain);
  const withModel = await startInstance(path.join(work, 'model'), { LLM_BASE_URL: model.baseUrl, LLM_API_KEY: model.key, LLM_MODEL: 'fake-model' });
  instances.push(withModel);

  const sheetA = (await plain.call('POST', '/sheets', { name: 'Leads', rows: rows(PER_CAMPAIGN) })).sheetId;
  const sheetB = (await withModel.call('POST', '/sheets', { name: 'Leads', rows: rows(25) })).sheetId;
  console.log(`  create from 25 rows, built-in writer       ${await timed(20, (i) => plain.call('POST', '/prospecting/campaigns', { name: `Warm-up ${i}`, ...brief, sheetId: sheetA, rowIds: ids(0, 25) }))}`);
  console.log(`  create from 25 rows, model at 300 ms       ${await timed(10, (i) => withModel.call('POST', '/prospecting/campaigns', { name: `Model ${i}`, ...brief, sheetId: sheetB, rowIds: ids(0, 25) }))}   (target <= 1,500 ms)`);

  // 200 campaigns × 200 prospects, through the API, 8 requests at a time.
  const started = performance.now();
  const jobs = [];
  for (let c = 20; c < CAMPAIGNS; c++) jobs.push(c);
  const fill = async (campaignId, from) => {
    for (let at = from; at < PER_CAMPAIGN; at += 25) await plain.call('POST', `/prospecting/campaigns/${campaignId}/prospects`, { sheetId: sheetA, rowIds: ids(at, Math.min(25, PER_CAMPAIGN - at)) });
  };
  const existing = (await plain.call('GET', '/prospecting/campaigns')).campaigns.map((c) => c.campaignId);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < existing.length + jobs.length) {
        const k = next++;
        if (k < existing.length) await fill(existing[k], 25);
        else {
          const { campaignId } = await plain.call('POST', '/prospecting/campaigns', { name: `Campaign ${jobs[k - existing.length]}`, ...brief, sheetId: sheetA, rowIds: ids(0, 25) });
          await fill(campaignId, 25);
        }
      }
    }),
  );
  const listed = await plain.call('GET', '/prospecting/campaigns');
  const total = listed.campaigns.reduce((n, c) => n + Object.values(c.counts).reduce((a, b) => a + b, 0), 0);
  console.log(`  made ${listed.campaigns.length} campaigns, ${total.toLocaleString('en')} prospects in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  // Some prospects move on, so that filtering by status has something to find.
  const someCampaign = listed.campaigns[5].campaignId;
  const some = (await plain.call('GET', `/prospecting/prospects?campaignId=${someCampaign}`)).prospects.slice(0, 50);
  for (const p of some) await plain.call('PATCH', `/prospecting/prospects/${p.prospectId}`, { status: 'replied' });

  console.log(`  list campaigns with counts                 ${await timed(50, () => plain.call('GET', '/prospecting/campaigns'))}   (target p99 <= 50 ms)`);
  console.log(`  list prospects, status=replied (50)        ${await timed(50, () => plain.call('GET', '/prospecting/prospects?status=replied'))}`);
  console.log(`  list prospects, campaign + status (150)    ${await timed(50, () => plain.call('GET', `/prospecting/prospects?campaignId=${someCampaign}&status=ready`))}`);
} finally {
  await Promise.all(instances.map((i) => i.stop()));
  await model.close();
  await rm(work, { recursive: true, force: true });
}
