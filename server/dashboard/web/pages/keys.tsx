/**
 * API keys: create one with a name (its secret shown once, with a copy button), the list (name,
 * first characters, created, last used, status; never the secret), revoke with a confirmation.
 * Its parts are in keys/.
 */
import { useState } from 'preact/hooks';
import { call } from '../api.ts';
import { Loading } from '../components/problem.tsx';
import { useLoad } from '../load.ts';
import { CreateKey, type Created } from './keys/create-key.tsx';
import { KeyTable } from './keys/key-table.tsx';
import { NewSecret } from './keys/new-secret.tsx';

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
