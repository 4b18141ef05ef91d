/** One prospect as a form: who it is, its source row, its fields, and Save / Undo with what came of the save. */
import { ProspectFields } from './prospect-fields.tsx';
import { prospectName, type Prospect } from './prospect-name.ts';
import { useProspectDraft } from './use-prospect-draft.ts';

export function ProspectEditor({ prospect, onSaved }: { prospect: Prospect; onSaved: (p: Prospect) => void }) {
  const { draft, changed, saving, outcome, edit, save, undo } = useProspectDraft(prospect, onSaved);
  const id = prospect.prospectId;
  return (
    <form class="prospect" onSubmit={save} aria-labelledby={`p-${id}`}>
      <h3 id={`p-${id}`}>{prospectName(prospect)}</h3>
      <SourceRow context={prospect.context} />
      <ProspectFields id={id} draft={draft} edit={edit} />
      <div class="actions">
        <button type="submit" class="primary" disabled={saving || changed.length === 0}>
          Save
        </button>
        {changed.length > 0 && (
          <button type="button" class="link-button" onClick={undo}>
            Undo changes
          </button>
        )}
        <span class={outcome?.ok === false ? 'save-error' : 'muted'} role={outcome?.ok === false ? 'alert' : undefined}>
          {outcome?.text ?? (changed.length > 0 ? 'Unsaved changes.' : '')}
        </span>
      </div>
    </form>
  );
}

/** The spreadsheet row the prospect came from, folded away. */
function SourceRow({ context }: { context: Prospect['context'] }) {
  const entries = Object.entries(context);
  if (entries.length === 0) return null;
  return (
    <details>
      <summary>Source row</summary>
      <dl class="context">
        {entries.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </details>
  );
}
