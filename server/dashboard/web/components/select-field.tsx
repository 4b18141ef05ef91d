/** A labelled `<select>` beside its label, as the pages' filters and periods are. */
import type { ComponentChildren } from 'preact';

export function InlineSelect({ id, label, value, onChange, children }: { id: string; label: string; value: string; onChange: (value: string) => void; children: ComponentChildren }) {
  return (
    <div class="field inline">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {children}
      </select>
    </div>
  );
}
