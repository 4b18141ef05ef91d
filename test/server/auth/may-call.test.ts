/**
 * `mayCall`, the one answer to "which operations may this caller see and call", against every
 * registry entry: it agrees with what the pipeline refuses a call with (`authorize`), for callers
 * with no credential, a refused one, a key holding one scope, every scope, and a dashboard
 * session; and the agent is never given a DELETE.
 */
import { describe, expect, it } from 'vitest';
import { operations, type OperationId } from '../../../shared/operations/index.ts';
import { SCOPES } from '../../../shared/operations/types.ts';
import { authorize, mayCall, sessionPrincipal } from '../../../server/auth/principal.ts';
import { anonymous, type Caller } from '../../../server/invocation/caller.ts';
import { visibleTools } from '../../../server/tools/tools.ts';

const key = (scopes: (typeof SCOPES)[number][]): Caller => ({ principal: { kind: 'api_key', credentialId: 'k', workspaceId: 'w', scopes }, refused: null });
const callers: Record<string, Caller> = {
  anonymous,
  'a refused token': { principal: null, refused: { code: 'unauthorized', message: 'bad token' } },
  'a key with catalog:read': key(['catalog:read']),
  'a key with every scope': key([...SCOPES]),
  'a dashboard session': { principal: sessionPrincipal({ id: 'a'.repeat(64), workspaceId: 'w', memberId: null }), refused: null },
};
const ids = Object.keys(operations) as OperationId[];

describe('mayCall', () => {
  for (const [name, caller] of Object.entries(callers)) {
    it(`agrees with authorize for ${name}, on every operation`, () => {
      for (const id of ids) {
        let authorized = true;
        try {
          authorize(caller, operations[id]);
        } catch {
          authorized = false;
        }
        expect([id, mayCall(caller, operations[id])]).toEqual([id, authorized]);
      }
    });
  }

  it('gives the agent no DELETE, and MCP every tool the scopes allow', () => {
    const everything = callers['a key with every scope']!;
    const deletes = ids.filter((id) => operations[id].method === 'DELETE');
    expect(deletes.length).toBeGreaterThan(0);
    for (const id of deletes) expect(mayCall(everything, operations[id], 'agent')).toBe(false);
    const agent = visibleTools(everything, 'agent').map((t) => t.operationId);
    const mcp = visibleTools(everything, 'mcp').map((t) => t.operationId);
    expect(agent.some((id) => operations[id].method === 'DELETE')).toBe(false);
    expect(mcp.filter((id) => !agent.includes(id)).every((id) => operations[id].method === 'DELETE')).toBe(true);
    expect(mcp.some((id) => operations[id].method === 'DELETE')).toBe(true);
    // One scope sees that scope's tools and the open ones only.
    const catalog = visibleTools(callers['a key with catalog:read']!, 'mcp');
    expect(catalog.length).toBeGreaterThan(0);
    expect(catalog.every((t) => t.operation.scope === null || t.operation.scope === 'catalog:read')).toBe(true);
  });
});
