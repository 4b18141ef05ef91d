/** API keys as the dashboard manages them: never the secret, except once, when a key is made. */
import { Type } from '@sinclair/typebox';
import { SCOPES } from '../operations/types.ts';
import { MAX_KEY_NAME } from '../key-name.ts';
import { ClosedObject, IdOf, Nullable, StringEnum, Timestamp } from './common.ts';

export const KeyName = Type.String({
  minLength: 1,
  maxLength: MAX_KEY_NAME,
  pattern: '\\S',
  description: 'What uses the key ("Sheets add-on", "CRM sync"); trimmed.',
});

const keyProperties = {
  keyId: IdOf('The key.'),
  name: Type.String({ description: 'What people call it.' }),
  hint: Type.String({ description: 'The first characters of the secret, to recognise it.' }),
  scopes: Type.Array(StringEnum(SCOPES), { description: 'What it may do.' }),
  createdAt: Timestamp,
};

export const ApiKey = ClosedObject(
  'An API key, without its secret.',
  {
    ...keyProperties,
    revokedAt: Nullable(Timestamp, 'When it was revoked; null while it works.'),
    lastUsedAt: Nullable(Timestamp, 'Its last authenticated use, to the minute; null if never used.'),
  },
  { title: 'ApiKey' },
);

export const ApiKeyList = ClosedObject('The keys of the workspace, oldest first, revoked ones included.', {
  keys: Type.Array(ApiKey, { description: 'Oldest first.' }),
});

export const ApiKeyCreateBody = ClosedObject('A new key.', { name: KeyName });

export const ApiKeyCreated = ClosedObject(
  'The new key, with its secret: shown this once, stored only as a hash.',
  { ...keyProperties, apiKey: Type.String({ description: 'The secret; send it as `Authorization: Bearer <apiKey>`.' }) },
  { title: 'ApiKeyCreated' },
);

export const ApiKeyParams = ClosedObject('The key.', { keyId: IdOf('The key.') });

export const ApiKeyRevoked = ClosedObject('The revoked key.', { keyId: IdOf('The key.'), revokedAt: Timestamp });
