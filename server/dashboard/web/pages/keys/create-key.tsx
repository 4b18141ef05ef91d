/** The form that creates a key from a name; the new key (with its secret) goes to `onCreated`. */
import { useState } from 'preact/hooks';
import { MAX_KEY_NAME } from '../../../../../shared/key-name.ts';
import { ApiError, call, type Out } from '../../api.ts';
import { messageOf, Problem } from '../../components/problem.tsx';
import { announce } from '../../live.ts';

export type Created = Out<'createApiKey'>;

export function CreateKey({ onCreated }: { onCreated: (key: Created) => void }) {
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: Event) {
    event.preventDefault();
    const trimmed = name.trim();
    if (!trimmed) {
      setError(new Error('Give the key a name, e.g. “Sheets add-on”.'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const key = await call('createApiKey', { name: trimmed });
      setName('');
      onCreated(key);
      announce(`Key “${key.name}” created. Copy it now: it is shown only once.`);
    } catch (err) {
      setError(err);
      announce(`The key was not created: ${messageOf(err)}`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="inline-form" onSubmit={submit} aria-labelledby="create-heading">
      <h2 id="create-heading" class="sr-only">
        Create a key
      </h2>
      <div class="field">
        <label for="key-name">Key name</label>
        <input
          id="key-name"
          name="name"
          type="text"
          autocomplete="off"
          maxLength={MAX_KEY_NAME}
          placeholder="e.g. Sheets add-on"
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
          aria-invalid={error instanceof ApiError && error.status === 400 ? true : undefined}
        />
      </div>
      <button type="submit" class="primary" disabled={busy}>
        Create key
      </button>
      {error !== null && <Problem error={error} />}
    </form>
  );
}
