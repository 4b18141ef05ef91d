/**
 * Templates: a workspace's reusable outreach configurations, unique by name (a unique index, so
 * two saves of the same name at once still make one template). POST saves by name; PATCH is the
 * only rename.
 */
import { randomUUID } from 'node:crypto';
import type { InputOf } from '../../shared/operations/index.ts';
import type { Template } from '../../shared/types.ts';
import { ServiceError, notFound } from '../lib/errors.ts';
import { isDuplicateKeyError, type Collection, type IndexDeclaration, type Store } from '../store/port.ts';

export type TemplateFields = InputOf<'createTemplate'>;

export interface TemplateDoc extends TemplateFields {
  _id: string;
  workspaceId: string;
  createdAt: Date;
  updatedAt: Date;
}

export const templateIndexes: IndexDeclaration[] = [
  { collection: 'templates', keys: { workspaceId: 1, name: 1 }, options: { unique: true } },
];

export function templateView({ _id, workspaceId, createdAt, updatedAt, ...doc }: TemplateDoc): Template {
  return { templateId: _id, ...doc, createdAt: createdAt.toISOString(), updatedAt: updatedAt.toISOString() };
}

const nameTaken = (name: string) => new ServiceError('name_taken', `A template named "${name}" already exists`);

export class Templates {
  private readonly collection: Collection<TemplateDoc>;

  constructor(store: Store) {
    this.collection = store.collection<TemplateDoc>('templates');
  }

  list(workspaceId: string): Promise<TemplateDoc[]> {
    return this.collection.find({ workspaceId }, { sort: { name: 1 } }).toArray();
  }

  get(workspaceId: string, templateId: string): Promise<TemplateDoc | null> {
    return this.collection.findOne({ _id: templateId, workspaceId });
  }

  /** Creates the template, or updates the one with this name; says which. */
  async save(workspaceId: string, fields: TemplateFields): Promise<{ template: TemplateDoc; created: boolean }> {
    const now = new Date();
    const { name, ...rest } = fields;
    for (let attempt = 0; ; attempt++) {
      try {
        const before = await this.collection.findOneAndUpdate(
          { workspaceId, name },
          { $set: { ...rest, updatedAt: now }, $setOnInsert: { _id: randomUUID(), workspaceId, name, createdAt: now } },
          { upsert: true, returnDocument: 'before' },
        );
        const template = (await this.collection.findOne({ workspaceId, name }))!;
        return { template, created: before === null };
      } catch (err) {
        // Two first saves of one name at once: the loser finds the winner's template next time.
        if (!isDuplicateKeyError(err) || attempt > 0) throw err;
      }
    }
  }

  async update(workspaceId: string, templateId: string, fields: Partial<TemplateFields>): Promise<TemplateDoc> {
    try {
      const updated = await this.collection.findOneAndUpdate(
        { _id: templateId, workspaceId },
        { $set: { ...fields, updatedAt: new Date() } },
        { returnDocument: 'after' },
      );
      if (!updated) throw notFound('template');
      return updated;
    } catch (err) {
      if (isDuplicateKeyError(err)) throw nameTaken(fields.name!);
      throw err;
    }
  }

  async remove(workspaceId: string, templateId: string): Promise<boolean> {
    return (await this.collection.deleteOne({ _id: templateId, workspaceId })).deletedCount === 1;
  }
}
