/**
 * The demo data set: a workspace with an active plan and credits, and a small synthetic
 * registry release imported through the real importer, so a first `npm start` can search and
 * look up companies at once. Later areas add their demo records here. Running it again issues a
 * new key for the same demo workspace (keys are stored hashed, so the first one cannot be shown
 * again) and leaves imported companies alone.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { importRelease, type ImportProgress } from '../receita/import/importer.ts';
import { generateRelease } from './release-generator.ts';
import type { Services } from '../start/services.ts';
import { seedDemoPeople } from './demo-people.ts';

export const DEMO_CREDITS = 10_000;

/** What seeding reads and writes. */
type DemoDeps = Pick<Services, 'store' | 'config' | 'workspaces' | 'keys' | 'credits' | 'companies' | 'people'>;

interface MarkerDoc {
  _id: string;
  workspaceId: string;
}

export async function seedDemo(
  services: DemoDeps,
  onProgress?: (progress: ImportProgress) => void,
): Promise<{ workspaceId: string; apiKey: string; created: boolean; companiesImported: number; peopleAdded: number }> {
  const companiesImported = await seedCompanies(services, onProgress);
  const peopleAdded = await seedDemoPeople(services.people);
  const markers = services.store.collection<MarkerDoc>('markers');
  const marker = await markers.findOne({ _id: 'demo' });
  if (marker && (await services.workspaces.get(marker.workspaceId))) {
    const { apiKey } = await services.keys.create(marker.workspaceId);
    return { workspaceId: marker.workspaceId, apiKey, created: false, companiesImported, peopleAdded };
  }
  const workspace = await services.workspaces.create('Demo workspace', 'active');
  await services.credits.credit(workspace._id, DEMO_CREDITS, 'grant', 'Demo credits');
  await markers.updateOne({ _id: 'demo' }, { $set: { workspaceId: workspace._id } }, { upsert: true });
  const { apiKey } = await services.keys.create(workspace._id);
  return { workspaceId: workspace._id, apiKey, created: true, companiesImported, peopleAdded };
}

/** The demo workspace, when this store holds one. */
export async function demoWorkspaceId(services: Pick<Services, 'store' | 'workspaces'>): Promise<string | null> {
  const marker = await services.store.collection<MarkerDoc>('markers').findOne({ _id: 'demo' });
  return marker && (await services.workspaces.get(marker.workspaceId)) ? marker.workspaceId : null;
}

/**
 * Imports a synthetic release of `DEMO_SEED_COMPANIES` establishments when the registry is empty;
 * returns how many.
 */
async function seedCompanies(services: DemoDeps, onProgress?: (progress: ImportProgress) => void): Promise<number> {
  if (!(await services.companies.isEmpty())) return 0;
  const dir = await mkdtemp(path.join(tmpdir(), 'prospecta-demo-release-'));
  try {
    await generateRelease({ dir, establishments: services.config.demoSeedCompanies });
    // Synthetic: a real release of any month may replace it without --force.
    const summary = await importRelease(services.store, { dir, release: '2026-10', synthetic: true, ...(onProgress ? { onProgress } : {}) });
    services.companies.changed();
    return summary.establishments;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
