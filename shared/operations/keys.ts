/**
 * API keys, managed from the dashboard alone: an API key (or access token) that could mint keys
 * would outlive its own revocation, so these answer only to a dashboard session.
 */
import { ApiKeyCreateBody, ApiKeyCreated, ApiKeyList, ApiKeyParams, ApiKeyRevoked } from '../schemas/keys.ts';
import { defineOperations } from './types.ts';

export const keyOperations = defineOperations({
  listApiKeys: {
    method: 'GET',
    path: '/api/keys',
    summary: 'List API keys',
    description: 'Every key of the workspace with its name, first characters, creation, last use and revocation; never a secret.',
    tag: 'API keys',
    scope: null,
    access: 'dashboard',
    requiresPlan: false,
    credits: { rule: 'free' },
    request: {},
    responses: { 200: ApiKeyList },
    errors: [401, 403],
    tool: false,
    extension: true,
  },
  createApiKey: {
    method: 'POST',
    path: '/api/keys',
    summary: 'Create an API key',
    description: 'A key with every scope. Its secret is in this answer and nowhere else, ever again.',
    tag: 'API keys',
    scope: null,
    access: 'dashboard',
    requiresPlan: false,
    credits: { rule: 'free' },
    request: { body: ApiKeyCreateBody },
    responses: { 201: ApiKeyCreated },
    errors: [400, 401, 403],
    tool: false,
    extension: true,
    // Its answer holds the secret, which is stored nowhere (only its hash): not under a key either.
    idempotent: false,
  },
  revokeApiKey: {
    method: 'DELETE',
    path: '/api/keys/{keyId}',
    summary: 'Revoke an API key',
    description: 'Refused from the moment this answers. 409 `already_revoked` when it was revoked before.',
    tag: 'API keys',
    scope: null,
    access: 'dashboard',
    requiresPlan: false,
    credits: { rule: 'free' },
    request: { params: ApiKeyParams },
    responses: { 200: ApiKeyRevoked },
    errors: [400, 401, 403, 404, 409],
    tool: false,
    extension: true,
  },
});
