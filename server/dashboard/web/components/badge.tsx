/** A status in a table cell: green for what works (`active`), grey for what does not (`revoked`). */
import type { ComponentChildren } from 'preact';

export function Badge({ kind, children }: { kind: 'active' | 'revoked'; children: ComponentChildren }) {
  return <span class={`badge ${kind}`}>{children}</span>;
}
