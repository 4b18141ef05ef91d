/**
 * A table that scrolls sideways inside its own focusable region (named for screen readers), so
 * no page scrolls sideways at 360 px; and its header row.
 */
import type { ComponentChildren } from 'preact';

export function ScrollingTable({ label, class: className, children }: { label: string; class?: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>
      <table class={className}>{children}</table>
    </div>
  );
}

/**
 * The columns' names; those in `numeric` hold figures (aligned right). `actions` adds the header
 * of a column of buttons, named for screen readers but not shown.
 */
export function HeaderRow({ columns, numeric = [], actions = false }: { columns: string[]; numeric?: string[]; actions?: boolean }) {
  return (
    <thead>
      <tr>
        {columns.map((name) => (
          <th scope="col" key={name} class={numeric.includes(name) ? 'num' : undefined}>
            {name}
          </th>
        ))}
        {actions && (
          <th scope="col">
            <span class="sr-only">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  );
}
