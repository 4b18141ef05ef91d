import { Type } from '@sinclair/typebox';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { checkRegistry, operations } from '../../shared/operations/index.ts';
import type { HttpMethod, Operation, Scope } from '../../shared/operations/types.ts';
import { Uuid } from '../../shared/schemas/common.ts';
import type { InputOf, OutputOf, ProspectStatus } from '../../shared/types.ts';

// Typed from interface.md (Endpoints, Authentication) and decisions.md (Sheets): id → route, scope,
// success status and the error statuses listed for the operation.
const expected: Record<string, [HttpMethod, string, Scope | null, number, number[]]> = {
  getHealth: ['GET', '/health', null, 200, []],
  listProviders: ['GET', '/api/providers', null, 200, []],
  searchPeople: ['POST', '/api/sourcing/people', 'search:write', 200, [400, 401, 402, 429, 500]],
  streamPeople: ['POST', '/api/sourcing/people/stream', 'search:write', 200, [400, 401, 402, 429, 500]],
  hydratePeople: ['POST', '/api/sourcing/people/hydrate', 'search:write', 200, [400, 401, 402, 429, 500]],
  searchCompanies: ['POST', '/api/companies/search', 'search:write', 200, [400, 401, 402, 429, 500]],
  streamCompanies: ['POST', '/api/companies/search/stream', 'search:write', 200, [400, 401, 402, 429, 500]],
  lookupCnpjBatch: ['POST', '/api/companies/cnpj/batch', 'search:write', 200, [400, 401, 402, 429, 500]],
  enrich: ['POST', '/api/enrich', 'enrich:write', 200, [400, 401, 402, 429, 500]],
  // The interface's list, plus decisions.md's 503 ai_unavailable and the 502 of an unusable model answer.
  research: ['POST', '/api/research', 'research:write', 200, [400, 401, 402, 429, 500, 502, 503]],
  aiColumn: ['POST', '/api/ai-column', 'research:write', 200, [400, 401, 402, 429, 500, 502, 503]],
  listTemplates: ['GET', '/api/prospecting/templates', 'outreach:read', 200, [401]],
  createTemplate: ['POST', '/api/prospecting/templates', 'outreach:write', 201, [400, 401, 429, 500]],
  updateTemplate: [
    'PATCH',
    '/api/prospecting/templates/{templateId}',
    'outreach:write',
    200,
    [400, 401, 404, 409, 429, 500],
  ],
  deleteTemplate: ['DELETE', '/api/prospecting/templates/{templateId}', 'outreach:write', 200, [401, 404]],
  listCampaigns: ['GET', '/api/prospecting/campaigns', 'outreach:read', 200, [401]],
  createCampaign: ['POST', '/api/prospecting/campaigns', 'outreach:write', 201, [400, 401, 402, 404, 429, 500]],
  getCampaign: ['GET', '/api/prospecting/campaigns/{campaignId}', 'outreach:read', 200, [401, 404]],
  updateCampaign: ['PATCH', '/api/prospecting/campaigns/{campaignId}', 'outreach:write', 200, [401, 404]],
  updateCadence: [
    'PATCH',
    '/api/prospecting/campaigns/{campaignId}/cadence',
    'outreach:write',
    200,
    [400, 401, 404, 409],
  ],
  addProspects: [
    'POST',
    '/api/prospecting/campaigns/{campaignId}/prospects',
    'outreach:write',
    201,
    [400, 401, 402, 404, 409, 429, 500],
  ],
  listProspects: ['GET', '/api/prospecting/prospects', 'outreach:read', 200, [401]],
  getProspect: ['GET', '/api/prospecting/prospects/{prospectId}', 'outreach:read', 200, [401, 404]],
  updateProspect: [
    'PATCH',
    '/api/prospecting/prospects/{prospectId}',
    'outreach:write',
    200,
    [400, 401, 404, 429, 500],
  ],
  deleteProspect: ['DELETE', '/api/prospecting/prospects/{prospectId}', 'outreach:write', 200, [401, 404]],
  listProspectEvents: ['GET', '/api/prospecting/prospects/{prospectId}/events', 'outreach:read', 200, [401, 404]],
  getCredits: ['GET', '/api/credits', 'credits:read', 200, [401]],
  // The dashboard's extensions: the ledger page by page, consumption per day, and keys (a session's alone).
  listLedger: ['GET', '/api/credits/ledger', 'credits:read', 200, [400, 401]],
  getUsage: ['GET', '/api/credits/usage', 'credits:read', 200, [400, 401]],
  listApiKeys: ['GET', '/api/keys', null, 200, [401, 403]],
  createApiKey: ['POST', '/api/keys', null, 201, [400, 401, 403]],
  revokeApiKey: ['DELETE', '/api/keys/{keyId}', null, 200, [400, 401, 403, 404, 409]],
  createSheet: ['POST', '/api/sheets', 'outreach:write', 201, [400, 401, 429, 500]],
  upsertSheetRows: ['PUT', '/api/sheets/{sheetId}/rows', 'outreach:write', 200, [400, 401, 404, 429, 500]],
  getSheet: ['GET', '/api/sheets/{sheetId}', 'outreach:read', 200, [401, 404]],
  deleteSheet: ['DELETE', '/api/sheets/{sheetId}', 'outreach:write', 200, [401, 404]],
  agentChat: ['POST', '/api/agent/chat', 'research:write', 200, [400, 401, 402, 404, 429, 500, 503]],
  listConversations: ['GET', '/api/agent/conversations', 'research:write', 200, [401]],
  getConversation: ['GET', '/api/agent/conversations/{conversationId}', 'research:write', 200, [401, 404]],
  // Jobs act for the operation they run: its scope, not one of their own (actsFor).
  startJob: ['POST', '/api/jobs', null, 202, [400, 401, 402, 403, 409, 413, 422, 429, 500]],
  listJobs: ['GET', '/api/jobs', null, 200, [401, 429]],
  getJob: ['GET', '/api/jobs/{jobId}', null, 200, [400, 401, 403, 404, 429]],
  getJobResults: ['GET', '/api/jobs/{jobId}/results', null, 200, [400, 401, 403, 404, 429]],
  cancelJob: ['POST', '/api/jobs/{jobId}/cancel', null, 200, [400, 401, 403, 404, 409, 429]],
  getJobExport: ['GET', '/api/jobs/{jobId}/export', null, 200, [400, 401, 403, 404, 429]],
  // Exports: every matching establishment written to a file by a job (decisions.md, registry changes).
  exportCompanies: ['POST', '/api/companies/export', 'search:write', 202, [400, 401, 402, 429, 500]],
  // Registry changes: the feed, and watches delivering them as signed webhooks.
  searchCompanyChanges: ['POST', '/api/companies/changes', 'search:write', 200, [400, 401, 402, 429, 500]],
  createWatch: ['POST', '/api/watches', 'search:write', 201, [400, 401, 402, 429, 500]],
  listWatches: ['GET', '/api/watches', 'search:write', 200, [401, 402, 429]],
  getWatch: ['GET', '/api/watches/{watchId}', 'search:write', 200, [400, 401, 402, 404, 429]],
  resumeWatch: ['POST', '/api/watches/{watchId}/resume', 'search:write', 200, [400, 401, 402, 404, 429]],
  deleteWatch: ['DELETE', '/api/watches/{watchId}', 'search:write', 200, [400, 401, 402, 404, 429]],
};

const registry: Record<string, Operation> = operations;
const sheets = ['createSheet', 'upsertSheetRows', 'getSheet', 'deleteSheet'];
const dashboard = ['listLedger', 'getUsage', 'listApiKeys', 'createApiKey', 'revokeApiKey'];
const keys = ['listApiKeys', 'createApiKey', 'revokeApiKey'];
const changes = ['searchCompanyChanges', 'createWatch', 'listWatches', 'getWatch', 'resumeWatch', 'deleteWatch'];
const jobs = ['startJob', 'listJobs', 'getJob', 'getJobResults', 'cancelJob', 'getJobExport'];

describe('operation registry', () => {
  it('holds exactly the operations of the interface, the sheets and the dashboard’s extensions', () => {
    expect(Object.keys(registry).sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(Object.entries(expected))('%s has its route, scope, success status and errors', (id, row) => {
    const [method, path, scope, status, errors] = row;
    const op = registry[id]!;
    expect({ method: op.method, path: op.path, scope: op.scope }).toEqual({ method, path, scope });
    expect(Object.keys(op.responses)).toEqual([String(status)]);
    expect([...op.errors].sort()).toEqual([...errors].sort());
    expect(op.summary.length).toBeGreaterThan(0);
  });

  it('needs a plan for everything but the catalog, credits, keys, the agent (its allowance is in payment.ts) and jobs (their operation\'s plan)', () => {
    const free = Object.keys(registry).filter((id) => !registry[id]!.requiresPlan);
    expect(free.sort()).toEqual(
      ['agentChat', 'getConversation', 'getCredits', 'getHealth', 'listConversations', 'listProviders', ...dashboard, ...jobs].sort(),
    );
  });

  it('charges as decisions.md says, and nothing for outreach and sheets', () => {
    const charged = Object.fromEntries(
      Object.entries(registry)
        .filter(([, op]) => op.credits.rule !== 'free')
        .map(([id, op]) => [id, op.credits]),
    );
    expect(charged).toEqual({
      searchPeople: { rule: 'per_result', unit: 'row', cost: 1 },
      streamPeople: { rule: 'per_result', unit: 'row', cost: 1 },
      searchCompanies: { rule: 'per_result', unit: 'row', cost: 1 },
      streamCompanies: { rule: 'per_result', unit: 'row', cost: 1 },
      lookupCnpjBatch: { rule: 'per_result', unit: 'company', cost: 1 },
      hydratePeople: { rule: 'per_result', unit: 'lead', cost: 1 },
      enrich: { rule: 'provider_sum' },
      research: { rule: 'fixed', cost: 2, costWith: { field: 'webSearch', cost: 5 } },
      aiColumn: { rule: 'fixed', cost: 1 },
      exportCompanies: { rule: 'per_result', unit: 'row', cost: 1 },
      searchCompanyChanges: { rule: 'per_result', unit: 'change', cost: 1 },
    });
  });

  it('marks the streams, the tools, the dashboard-only operations and the extensions', () => {
    const ids = (flag: (op: Operation) => boolean | undefined) =>
      Object.keys(registry).filter((id) => flag(registry[id]!));
    expect(ids((op) => Boolean(op.stream))).toEqual(['streamPeople', 'streamCompanies', 'agentChat']);
    expect(ids((op) => op.tool === false).sort()).toEqual(['agentChat', 'listConversations', 'getConversation', 'getJobExport', ...keys].sort());
    expect(ids((op) => op.access === 'dashboard').sort()).toEqual([...keys].sort());
    expect(ids((op) => op.extension).sort()).toEqual([...sheets, ...dashboard, ...jobs, ...changes, 'exportCompanies'].sort());
    expect(ids((op) => Boolean(op.actsFor)).sort()).toEqual([...jobs].sort());
  });

  it('gives a body schema to every POST, PUT and PATCH', () => {
    for (const op of Object.values(registry)) {
      if (['POST', 'PUT', 'PATCH'].includes(op.method)) expect(op.request.body, op.path).toBeDefined();
    }
  });
});

describe('InputOf and OutputOf', () => {
  it('merge path params, query and body, and give the success body', () => {
    expectTypeOf<InputOf<'updateTemplate'>>().branded.toEqualTypeOf<{
      templateId: string;
      name?: string;
      campaignName?: string;
      offering?: string;
      senderName?: string;
      tone?: string;
      businessContext?: string;
      language?: string;
    }>();
    expectTypeOf<InputOf<'listProspects'>>().branded.toEqualTypeOf<{ campaignId?: string; status?: ProspectStatus }>();
    expectTypeOf<OutputOf<'createCampaign'>>().toEqualTypeOf<{
      campaignId: string;
      campaignName: string;
      created: number;
      languageNote?: string;
    }>();
  });
});

describe('checkRegistry', () => {
  const getCampaign = registry.getCampaign!;
  const entry = (path: string, request: Operation['request'] = {}): Operation => ({ ...getCampaign, path, request });

  it('accepts the registry', () => {
    expect(() => checkRegistry(registry)).not.toThrow();
  });

  it('rejects two operations on one route, whatever their parameter names', () => {
    const readCampaign = entry('/api/prospecting/campaigns/{id}', { params: Type.Object({ id: Uuid }) });
    expect(() => checkRegistry({ getCampaign, readCampaign })).toThrow(
      'readCampaign: GET /api/prospecting/campaigns/{id} is also the route of getCampaign',
    );
  });

  it('rejects a path parameter without a params entry, and a params entry not in the path', () => {
    expect(() => checkRegistry({ getThing: entry('/api/things/{thingId}') })).toThrow(
      'getThing: path parameter {thingId} has no entry in request.params',
    );
    expect(() => checkRegistry({ getThing: entry('/api/things', { params: Type.Object({ thingId: Uuid }) }) })).toThrow(
      'getThing: request.params.thingId is not in the path /api/things',
    );
  });

  it('rejects an id that is not camelCase', () => {
    expect(() => checkRegistry({ 'get-things': entry('/api/things') })).toThrow('get-things: the id is not camelCase');
  });
});
