/**
 * The demo data set: a workspace with an active plan and credits, so a first `npm start` can be
 * tried at once. Later areas add their demo records here. Running it again issues a new key for
 * the same demo workspace (keys are stored hashed, so the first one cannot be shown again).
 */
import type { Services } from '../services.ts';

export const DEMO_CREDITS = 10_000;

interface MarkerDoc {
  _id: string;
  workspaceId: string;
}

export async function seedDemo(services: Services): Promise<{ workspaceId: string; apiKey: string; created: boolean }> {
  const markers = services.store.collection<MarkerDoc>('markers');
  const marker = await markers.findOne({ _id: 'demo' });
  if (marker && (await services.workspaces.get(marker.workspaceId))) {
    const { apiKey } = await services.keys.create(marker.workspaceId);
    return { workspaceId: marker.workspaceId, apiKey, created: false };
  }
  const workspace = await services.workspaces.create('Demo workspace', 'active');
  await services.credits.credit(workspace._id, DEMO_CREDITS, 'grant', 'Demo credits');
  await markers.updateOne({ _id: 'demo' }, { $set: { workspaceId: workspace._id } }, { upsert: true });
  const { apiKey } = await services.keys.create(workspace._id);
  return { workspaceId: workspace._id, apiKey, created: true };
}
