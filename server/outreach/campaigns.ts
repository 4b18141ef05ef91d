/**
 * Campaigns: a copy of their configuration (never a pointer to a template that may change), a
 * cadence once they have prospects, and a prospect count that is reserved with one conditional
 * update before prospects are inserted, so concurrent adds never take a campaign past
 * CAMPAIGN_MAX_PROSPECTS. Counts per status are computed by the store from the prospects.
 */
import { randomUUID } from 'node:crypto';
import { PROSPECT_STATUSES } from '../../shared/schemas/prospects.ts';
import type { Collection, IndexDeclaration, Store } from '../store/port.ts';
import type { CadenceStep, Campaign, StatusCounts } from '../../shared/types.ts';
import { languageNote } from './writer-language.ts';

/** What a campaign is configured with: the contract's campaign fields a client writes. */
export type CampaignConfig = Pick<Campaign, 'name' | 'offering' | 'senderName' | 'tone' | 'businessContext' | 'language'>;

/** A stored campaign: the contract's Campaign, less what is computed when it is read (`counts`). */
export type CampaignDoc = Omit<Campaign, 'campaignId' | 'counts' | 'languageNote' | 'createdAt' | 'updatedAt'> & {
  _id: string;
  workspaceId: string;
  /** Prospects in the campaign, reserved before they are inserted. */
  prospectCount: number;
  createdAt: Date;
  updatedAt: Date;
};

export type { StatusCounts };

export const campaignIndexes: IndexDeclaration[] = [{ collection: 'campaigns', keys: { workspaceId: 1, createdAt: 1 } }];

export const emptyCounts = (): StatusCounts => Object.fromEntries(PROSPECT_STATUSES.map((s) => [s, 0])) as StatusCounts;

export function campaignView({ _id, workspaceId, prospectCount, createdAt, updatedAt, ...doc }: CampaignDoc, counts: StatusCounts): Campaign {
  const note = languageNote(doc.language);
  return { campaignId: _id, ...doc, ...(note ? { languageNote: note } : {}), counts, createdAt: createdAt.toISOString(), updatedAt: updatedAt.toISOString() };
}

export class Campaigns {
  readonly collection: Collection<CampaignDoc>;

  constructor(store: Store) {
    this.collection = store.collection<CampaignDoc>('campaigns');
  }

  async create(workspaceId: string, config: CampaignConfig, templateId: string | null): Promise<CampaignDoc> {
    const now = new Date();
    const doc: CampaignDoc = { _id: randomUUID(), workspaceId, ...config, status: 'draft', templateId, cadence: null, prospectCount: 0, createdAt: now, updatedAt: now };
    await this.collection.insertOne(doc);
    return doc;
  }

  get(workspaceId: string, campaignId: string): Promise<CampaignDoc | null> {
    return this.collection.findOne({ _id: campaignId, workspaceId });
  }

  list(workspaceId: string): Promise<CampaignDoc[]> {
    return this.collection.find({ workspaceId }, { sort: { createdAt: 1, _id: 1 } }).toArray();
  }

  update(workspaceId: string, campaignId: string, fields: Partial<CampaignConfig>): Promise<CampaignDoc | null> {
    return this.collection.findOneAndUpdate({ _id: campaignId, workspaceId }, { $set: { ...fields, updatedAt: new Date() } }, { returnDocument: 'after' });
  }

  /** Takes `n` places in the campaign if they fit under `max`; false when they do not. */
  async reserve(campaignId: string, n: number, max: number): Promise<boolean> {
    const taken = await this.collection.findOneAndUpdate(
      { _id: campaignId, prospectCount: { $lte: max - n } },
      { $inc: { prospectCount: n }, $set: { updatedAt: new Date() } },
      { returnDocument: 'after' },
    );
    return taken !== null;
  }

  async remove(campaignId: string): Promise<void> {
    await this.collection.deleteOne({ _id: campaignId });
  }

  async release(campaignId: string, n: number): Promise<void> {
    if (n > 0) await this.collection.updateOne({ _id: campaignId }, { $inc: { prospectCount: -n } });
  }

  /** Sets the default cadence unless the campaign has one already. */
  async ensureCadence(campaignId: string, steps: CadenceStep[]): Promise<void> {
    await this.collection.updateOne({ _id: campaignId, cadence: null }, { $set: { cadence: steps } });
  }

  setCadence(workspaceId: string, campaignId: string, steps: CadenceStep[]): Promise<CampaignDoc | null> {
    return this.collection.findOneAndUpdate({ _id: campaignId, workspaceId }, { $set: { cadence: steps, updatedAt: new Date() } }, { returnDocument: 'after' });
  }
}
