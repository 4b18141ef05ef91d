/** What a page of the change history holds and how it is asked for, on either store (change-history.ts). */
import type { ChangeKind } from '../../../shared/change-kinds.ts';
import type { ChangeCompany, FieldsChange } from './change-diff.ts';

/** A change as the feed and the watches give it. */
export interface StoredChange {
  cnpj: string;
  release: string;
  previousRelease: string;
  kind: ChangeKind;
  fields: FieldsChange['fields'];
  company: ChangeCompany;
}

/** Where a page of changes stopped: newest release first, then CNPJ, then kind. */
export interface ChangePosition {
  release: string;
  cnpj: string;
  kind: ChangeKind;
}

export interface ChangeQuery {
  /** The releases whose changes to read (each compared with the one before it). */
  releases: string[];
  kinds?: ChangeKind[];
  cnpjs?: string[];
  after?: ChangePosition;
  limit: number;
}

export interface ChangePage {
  changes: StoredChange[];
  /** Where the next page starts; null when none is left. */
  more: ChangePosition | null;
}
