/**
 * API keys: create one with a name (its secret shown once, with a copy button), the list (name,
 * first characters, created, last used, status; never the secret), revoke with a confirmation.
 */
import { useRef, useState } from 'preact/hooks';
import { MAX_KEY_NAME } from '../../../../shared/key-name.ts';
import { ApiError, call, type Out } from '../api.ts';
import { formatTime } from '../format.ts';
import { announce } from '../live.ts';
import { useLoad } from '../load.ts';
import { Loading, messageOf, Problem } from '../problem.tsx';

type Key = Out<'listApiKeys'>['keys'][number];
type Created = Out<'createApiKey'>;


export function Keys() {
  const keys = useLoad(() => call('listApiKeys'), []);
  const [created, setCreated] = useState<Created | null>(null);

  return (
    <>
      <h1 tabIndex={-1}>API keys</h1>
      <p class="lead">
        A key lets a program (the Sheets add-on, a script, an MCP client) call the API for this workspace. Send it as{' '}
        <code>Authorization: Bearer …</code>. The secret is shown once, when the key is created.
      </p>
      <CreateKey
        onCreated={(key) => {
          setCreated(key);
          const { apiKey: _secret, ...listed } = key;
          keys.set((data) => ({ keys: [...data.keys, { ...listed, revokedAt: null, lastUsedAt: null }] }));
          keys.reload();
        }}
      />
      {created && <NewSecret created={created} onDone={() => setCreated(null)} />}
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading" tabIndex={-1}>
          Your keys
        </h2>
        <Loading state={keys.state} label="the keys">
          {(data) => (
            <KeyTable
              keys={[...data.keys].reverse()}
              onRevoked={(keyId, revokedAt) => {
                keys.set((d) => ({ keys: d.keys.map((k) => (k.keyId === keyId ? { ...k, revokedAt: k.revokedAt ?? revokedAt } : k)) }));
              }}
            />
          )}
        </Loading>
      </section>
    </>
  );
}

function CreateKey({ onCreated }: { onCreated: (key: Created) => void }) {
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

function NewSecret({ created, onDone }: { created: Created; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string | null>(null);

  async function copy() {
    try {
      await navigator.clipboard.writeText(created.apiKey);
      setCopied('Copied to the clipboard.');
    } catch {
      // No clipboard access (an insecure origin, a denied permission): select it for Ctrl+C.
      field.current?.focus();
      field.current?.select();
      setCopied('Selected: press Ctrl+C (⌘C) to copy it.');
    }
  }

  return (
    <section class="secret" aria-labelledby="secret-heading">
      <h2 id="secret-heading">Key “{created.name}” created</h2>
      <p>Copy it now and keep it somewhere safe: it will not be shown again.</p>
      <label for="new-key">New API key</label>
      <div class="copy-row">
        <input
          id="new-key"
          ref={(el) => {
            // Focus the secret once, so a keyboard user lands where the next step is.
            if (el && field.current !== el) {
              field.current = el;
              el.focus();
            }
          }}
          class="mono"
          type="text"
          readOnly
          value={created.apiKey}
          spellcheck={false}
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      <p class="muted" role="status">
        {copied ?? ''}
      </p>
      <button type="button" class="link-button" onClick={onDone}>
        I have copied it, hide it
      </button>
    </section>
  );
}

function KeyTable({ keys, onRevoked }: { keys: Key[]; onRevoked: (keyId: string, revokedAt: string) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLButtonElement | null>(null);
  const [target, setTarget] = useState<Key | null>(null);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ kind: 'info' | 'error'; text: string } | null>(null);

  if (keys.length === 0) return <p class="muted">No keys yet. Create one above.</p>;

  function ask(key: Key, button: HTMLButtonElement) {
    opener.current = button;
    setTarget(key);
    setOutcome(null);
    dialog.current?.showModal();
  }

  function closed() {
    setTarget(null);
    // Back to where the keyboard was, or to the table once that button is gone (revoked).
    const back = opener.current?.isConnected ? opener.current : document.getElementById('keys-heading');
    back?.focus();
  }

  async function confirm() {
    if (!target) return;
    setBusy(true);
    const key = target;
    try {
      const done = await call('revokeApiKey', { keyId: key.keyId });
      onRevoked(key.keyId, done.revokedAt);
      setOutcome({ kind: 'info', text: `Key “${key.name}” revoked. Requests with it are refused from now on.` });
      announce(`Key “${key.name}” revoked.`);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'already_revoked') {
        onRevoked(key.keyId, new Date().toISOString());
        setOutcome({ kind: 'info', text: `Key “${key.name}” was already revoked (in another tab or from the command line).` });
        announce(`Key “${key.name}” was already revoked.`);
      } else {
        setOutcome({ kind: 'error', text: `Key “${key.name}” was not revoked: ${messageOf(err)}` });
        announce(`The key was not revoked: ${messageOf(err)}`);
      }
    } finally {
      setBusy(false);
      dialog.current?.close();
    }
  }

  return (
    <>
      {outcome && (
        <div class={`notice ${outcome.kind}`} role={outcome.kind === 'error' ? 'alert' : undefined}>
          <p>{outcome.text}</p>
        </div>
      )}
      <div class="table-wrap" tabIndex={0} role="region" aria-label="Table of keys">
        <table class="keys">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">First characters</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key.keyId} class={key.revokedAt ? 'revoked' : undefined}>
                <th scope="row" id={`key-${key.keyId}`}>
                  {key.name}
                </th>
                <td>
                  <code>{key.hint}</code>
                </td>
                <td class="nowrap">{formatTime(key.createdAt)}</td>
                <td class="nowrap">{key.lastUsedAt ? formatTime(key.lastUsedAt) : 'Never'}</td>
                <td>{key.revokedAt ? <span class="badge revoked">Revoked {formatTime(key.revokedAt)}</span> : <span class="badge active">Active</span>}</td>
                <td>
                  {!key.revokedAt && (
                    <button type="button" class="danger" aria-describedby={`key-${key.keyId}`} onClick={(e) => ask(key, e.currentTarget)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <dialog ref={dialog} aria-labelledby="revoke-heading" aria-describedby="revoke-text" onClose={closed}>
        <h2 id="revoke-heading">Revoke “{target?.name}”?</h2>
        <p id="revoke-text">Programs using this key are refused at once (401). This cannot be undone.</p>
        <div class="actions">
          <button type="button" autoFocus onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button type="button" class="danger" disabled={busy} onClick={confirm}>
            Confirm
          </button>
        </div>
      </dialog>
    </>
  );
}
