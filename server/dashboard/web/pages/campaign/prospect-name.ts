/** Who a prospect is, as its heading and the announcements about it name it. */
import { headerMeaning } from '../../../../../shared/column-headers.ts';
import type { OutputOf } from '../../../../../shared/operations/index.ts';

export type Prospect = OutputOf<'updateProspect'>;

/** Who the prospect is, from its source row: a name column, else first + last name, else the company, else the row. */
export function prospectName(p: Pick<Prospect, 'context' | 'rowId'>): string {
  const by: Partial<Record<string, string>> = {};
  for (const [label, value] of Object.entries(p.context)) {
    const meaning = headerMeaning(label);
    if (meaning && value.trim() && !by[meaning]) by[meaning] = value.trim();
  }
  const person = by.name ?? ([by.firstName, by.lastName].filter(Boolean).join(' ') || undefined);
  if (person && by.company) return `${person} (${by.company})`;
  return person ?? by.company ?? `Row ${p.rowId}`;
}
