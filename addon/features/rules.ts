/**
 * Prices and limits the sidebar shows, read from the operation registry (the same table the
 * server charges and validates by), so the sidebar never states a number of its own.
 */
import { priceOf } from '../../shared/operations/types.ts';
import { limitOf } from '../api/client.ts';
import { registry as operations } from '../api/registry.ts';
import { DEFAULT_EXPORT_ROWS } from '../../shared/schemas/exports.ts';
import { CHANGE_KINDS } from '../../shared/schemas/changes.ts';

export interface Prices {
  /** Per row a search returns. */
  companyRow: number;
  /** Per row an export writes. */
  exportRow: number;
  /** Per registry change found. */
  change: number;
  personRow: number;
  /** Per company found by a CNPJ lookup. */
  cnpj: number;
  /** Per AI column value written (a value served from the server's cache is free). */
  aiColumn: number;
  research: number;
  researchWithWeb: number;
}

export function prices(): Prices {
  return {
    companyRow: priceOf(operations.searchCompanies.credits, 1, {}),
    exportRow: priceOf(operations.exportCompanies.credits, 1, {}),
    change: priceOf(operations.searchCompanyChanges.credits, 1, {}),
    personRow: priceOf(operations.searchPeople.credits, 1, {}),
    cnpj: priceOf(operations.lookupCnpjBatch.credits, 1, {}),
    aiColumn: priceOf(operations.aiColumn.credits, 1, {}),
    research: priceOf(operations.research.credits, 1, { webSearch: false }),
    researchWithWeb: priceOf(operations.research.credits, 1, { webSearch: true }),
  };
}

/** The most results each search may ask for. */
export function searchLimits(): { people: number; companies: number } {
  return { people: limitOf('searchPeople', 'limit', 'maximum'), companies: limitOf('searchCompanies', 'limit', 'maximum') };
}

/** The most rows an export writes, and what it writes when not told. */
export function exportLimits(): { max: number; default: number } {
  return { max: limitOf('exportCompanies', 'maxRows', 'maximum'), default: DEFAULT_EXPORT_ROWS };
}

/**
 * The most changes one establishment can have in one release: a change per kind, but `opened` and
 * `removed` come alone.
 */
export const MOST_CHANGES_A_RELEASE = CHANGE_KINDS.length - 2;
