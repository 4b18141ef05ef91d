/**
 * Every request rule of the registry as data: one valid input per operation, and for each rule
 * an input that breaks it (and nothing else) with the words the 400 message must contain. Used
 * by validate.test.ts directly and by the HTTP tests through real requests.
 */
import type { RequestPart } from '../../../server/pipeline/validate.ts';
import { ENRICH_FIELDS, PROVIDER_IDS } from '../../../shared/schemas/enrichment.ts';
import { COMPANY_SOURCES } from '../../../shared/schemas/companies.ts';
import { COMPANY_SIZES, PEOPLE_SOURCES, ROLES, SENIORITIES } from '../../../shared/schemas/search.ts';
import type { OperationId } from '../../../shared/types.ts';

type Input = Record<string, unknown>;

export interface ValidationCase {
  op: OperationId;
  part: RequestPart;
  input: unknown;
  /** A substring of the error message: it names the field. */
  field: string;
}

export interface ValidInput {
  params?: Input;
  query?: Input;
  body?: unknown;
}

const campaignId = '0b8f3a4e-6c1d-4f2a-9e57-3d2c1b0a9f88';
const prospectId = 'c41e7d2a-58b3-4a6f-8d90-1f2e3d4c5b6a';
const sheetId = '5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9';
const templateId = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';

const chars = (count: number) => 'a'.repeat(count);
const list = <T>(count: number, item: (i: number) => T) => Array.from({ length: count }, (_, i) => item(i));
const omit = (input: Input, key: string) => Object.fromEntries(Object.entries(input).filter(([k]) => k !== key));

/** A valid head-office CNPJ (digits only) from a company root number. */
function cnpj(root: number): string {
  let digits = `${String(root).padStart(8, '0')}0001`;
  for (const weights of [[5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2], [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]]) {
    const rest = weights.reduce((sum, weight, i) => sum + weight * Number(digits[i]), 0) % 11;
    digits += rest < 2 ? '0' : String(11 - rest);
  }
  return digits;
}

const step = { day: 0, channel: 'email', subject: 'Quick question about {{company}}', body: 'Hi Ana, …' };
const column = { id: 'c1', label: 'Company', value: 'Acme Ltda' };
const row = (i: number) => ({ rowId: `row-${i}`, values: { Name: `Person ${i}`, Email: `person${i}@acme.com.br` } });

const bodies = {
  searchPeople: { jobTitle: 'Head of Sales', location: 'São Paulo, Brazil', limit: 10 },
  hydratePeople: { leads: [{ name: 'Ana Souza', company: 'Acme Ltda', source: 'apollo' }] },
  searchCompanies: { industry: 'software', state: 'SP', limit: 20 },
  lookupCnpjBatch: { cnpjs: ['11.222.333/0001-81'] }, // a valid CNPJ, punctuated
  enrich: { email: 'ana.souza@acme.com.br' },
  research: { prompt: 'What does this company sell?', company: 'Acme Ltda', companyDomain: 'acme.com.br' },
  aiColumn: { instruction: 'Write a one-line opener', Name: 'Ana Souza', Company: 'Acme Ltda' },
  createTemplate: { name: 'SaaS founders', offering: 'Outbound SDR as a service' },
  updateTemplate: { tone: 'friendly' },
  createCampaign: { name: 'Q3 São Paulo', offering: 'Outbound SDR as a service' },
  updateCampaign: { tone: 'formal' },
  updateCadence: { steps: [step] },
  addProspects: { sheetId, rowIds: ['row-1'] },
  updateProspect: { status: 'replied' },
  createSheet: { name: 'Leads SP', rows: [row(1)] },
  upsertSheetRows: { rows: [row(2)] },
} satisfies Partial<Record<OperationId, Input>>;

export const validInputs: Partial<Record<OperationId, ValidInput>> = {
  getHealth: {},
  listProviders: {},
  searchPeople: { body: bodies.searchPeople },
  streamPeople: { body: bodies.searchPeople },
  hydratePeople: { body: bodies.hydratePeople },
  searchCompanies: { body: bodies.searchCompanies },
  streamCompanies: { body: bodies.searchCompanies },
  lookupCnpjBatch: { body: bodies.lookupCnpjBatch },
  enrich: { body: bodies.enrich },
  research: { body: bodies.research },
  aiColumn: { body: bodies.aiColumn },
  listTemplates: {},
  createTemplate: { body: bodies.createTemplate },
  updateTemplate: { params: { templateId }, body: bodies.updateTemplate },
  deleteTemplate: { params: { templateId } },
  listCampaigns: {},
  createCampaign: { body: bodies.createCampaign },
  getCampaign: { params: { campaignId } },
  updateCampaign: { params: { campaignId }, body: bodies.updateCampaign },
  updateCadence: { params: { campaignId }, body: bodies.updateCadence },
  addProspects: { params: { campaignId }, body: bodies.addProspects },
  listProspects: { query: {} },
  getProspect: { params: { prospectId } },
  updateProspect: { params: { prospectId }, body: bodies.updateProspect },
  deleteProspect: { params: { prospectId } },
  listProspectEvents: { params: { prospectId } },
  getCredits: {},
  listLedger: { query: { limit: 200, before: 12, operation: 'enrich' } },
  getUsage: { query: { days: 90 } },
  listApiKeys: {},
  createApiKey: { body: { name: 'Sheets add-on' } },
  revokeApiKey: { params: { keyId: sheetId } },
  createSheet: { body: bodies.createSheet },
  upsertSheetRows: { params: { sheetId }, body: bodies.upsertSheetRows },
  getSheet: { params: { sheetId } },
  deleteSheet: { params: { sheetId } },
  agentChat: { body: { message: 'Which of these are active?', conversationId: sheetId, maxCredits: 5, context: { header: ['CNPJ'], rows: [['11.222.333/0001-81']] } } },
  listConversations: {},
  getConversation: { params: { conversationId: sheetId } },
  startJob: {
    body: {
      operation: 'lookupCnpjBatch',
      items: [{ itemId: 'row-2', input: bodies.lookupCnpjBatch }],
      // No webhook: its host must resolve to a public address, which nothing here does (webhooks.test.ts covers it).
      maxCredits: 100,
    },
  },
  listJobs: {},
  getJob: { params: { jobId: sheetId } },
  getJobResults: { params: { jobId: sheetId }, query: { cursor: 'abc', limit: 500 } },
  cancelJob: { params: { jobId: sheetId }, body: {} },
  exportCompanies: { body: { state: 'SP', cnaes: ['5611201'], format: 'csv', maxRows: 1_000_000 } },
  getJobExport: { params: { jobId: sheetId } },
  // No `since`: no release is imported here, and one never imported is refused (changes.test.ts covers it).
  searchCompanyChanges: { body: { cnpjs: [cnpj(11222333)], kinds: ['opened', 'status'], state: 'SP', limit: 100, cursor: null } },
  createWatch: {
    // A public address written as one: a host name must resolve, which nothing here does.
    body: { name: 'Customers', cnpjs: [cnpj(11222333)], filters: { state: 'SP' }, kinds: ['status'], webhook: { url: 'https://93.184.216.34/hook', secret: 'x'.repeat(16) } },
  },
  listWatches: {},
  getWatch: { params: { watchId: sheetId } },
  resumeWatch: { params: { watchId: sheetId }, body: {} },
  deleteWatch: { params: { watchId: sheetId } },
};

/** Inputs at the edges of the limits, which must pass. */
export const validEdgeCases: Array<{ op: OperationId; part: RequestPart; input: unknown }> = [
  { op: 'searchPeople', part: 'body', input: { limit: 25, emailStatuses: ['verified', 'likely to engage'] } },
  { op: 'streamPeople', part: 'body', input: { ...bodies.searchPeople, limit: 1, sourceOrder: ['apollo'] } },
  { op: 'searchCompanies', part: 'body', input: { limit: 1, capitalMin: 0, openingDateMin: '2020-01-31' } },
  { op: 'streamCompanies', part: 'body', input: { name: 'Acme', limit: 25, companyOrder: ['receita_federal'] } },
  { op: 'hydratePeople', part: 'body', input: { leads: list(25, (i) => ({ name: `Lead ${i}` })) } },
  { op: 'lookupCnpjBatch', part: 'body', input: { cnpjs: list(500, (i) => cnpj(11222333 + i)) } },
  { op: 'enrich', part: 'body', input: { companyDomain: 'acme.com.br', goalFields: ['phone'], onlyListed: true } },
  {
    op: 'research',
    part: 'body',
    input: { prompt: 'Summarise', webSearch: true, columns: [column] },
  },
  { op: 'aiColumn', part: 'body', input: { instruction: 'Guess the department' } },
  {
    op: 'createTemplate',
    part: 'body',
    input: {
      name: chars(120),
      campaignName: chars(120),
      offering: chars(2000),
      senderName: chars(120),
      tone: chars(200),
      businessContext: chars(20000),
      language: chars(80),
    },
  },
  {
    op: 'createCampaign',
    part: 'body',
    input: { ...bodies.createCampaign, templateId, sheetId, rowIds: list(25, (i) => `row-${i}`), language: 'pt-BR' },
  },
  { op: 'updateCampaign', part: 'body', input: {} },
  { op: 'updateCadence', part: 'body', input: { steps: list(20, (day) => ({ ...step, day })), prospectId } },
  { op: 'updateCadence', part: 'body', input: { steps: [{ day: 3, channel: 'linkedin', body: chars(5000) }] } },
  { op: 'addProspects', part: 'body', input: { sheetId, rowIds: list(25, (i) => chars(64 - String(i).length) + i) } },
  { op: 'listProspects', part: 'query', input: { campaignId, status: 'awaiting_reply' } },
  {
    op: 'updateProspect',
    part: 'body',
    input: { connectionNote: chars(300), emailSubject: chars(300), emailBody: chars(5000), status: 'paused' },
  },
  { op: 'createSheet', part: 'body', input: { name: 'Empty', rows: [] } },
  { op: 'upsertSheetRows', part: 'body', input: { rows: list(1000, row) } },
];

type Mutation = [change: Input, field: string];

/** Cases built from a valid body: each mutation is merged into it. */
const mutate = (op: OperationId, base: Input, mutations: Mutation[]): ValidationCase[] =>
  mutations.map(([change, field]) => ({ op, part: 'body', input: { ...base, ...change }, field }));

const missing = (op: OperationId, base: Input, ...keys: string[]): ValidationCase[] =>
  keys.map((key) => ({ op, part: 'body', input: omit(base, key), field: `${key} is required` }));

const notAnObject = (op: OperationId): ValidationCase[] =>
  [[], 'text', 42, null].map((input) => ({ op, part: 'body', input, field: 'body must be a JSON object' }));

const strings = (...keys: string[]): Mutation[] => keys.map((key) => [{ [key]: 42 }, `${key} must be a string`]);
const stringLists = (...keys: string[]): Mutation[] =>
  keys.flatMap((key): Mutation[] => [
    [{ [key]: 'one' }, `${key} must be an array`],
    [{ [key]: ['one', 2] }, `${key}[1] must be a string`],
  ]);
/** Lists whose items come from a vocabulary: a wrong word is refused with the whole list. */
const enumLists = (lists: Record<string, readonly string[]>): Mutation[] =>
  Object.entries(lists).flatMap(([key, allowed]): Mutation[] => [
    [{ [key]: allowed[0] }, `${key} must be an array`],
    [{ [key]: [allowed[0], 2] }, `${key}[1] must be a string`],
    [{ [key]: [allowed[0], 'nonsense'] }, `${key}[1] must be one of: ${allowed.join(', ')}`],
  ]);
const booleans = (...keys: string[]): Mutation[] => keys.map((key) => [{ [key]: 'true' }, `${key} must be a boolean`]);
const maxLengths = (limits: Record<string, number>): Mutation[] =>
  Object.entries(limits).map(([key, max]) => [{ [key]: chars(max + 1) }, `${key} must be at most ${max} characters`]);

const notUuid = (op: OperationId, name: string): ValidationCase => ({
  op,
  part: 'params',
  input: { [name]: 'not-a-uuid' },
  field: `${name} must be a UUID`,
});

const emailStatusesEnum = 'must be one of: verified, likely to engage, unverified, unavailable';
const prospectStatusEnum = 'must be one of: ready, sending, awaiting_reply, replied, paused, failed';
const campaignUpdateLimits = { name: 120, offering: 2000, senderName: 120, tone: 200, businessContext: 20000 };
const campaignLimits = { ...campaignUpdateLimits, language: 80 };
const templateLimits = { ...campaignLimits, campaignName: 120 };

const peopleCases = (op: OperationId): ValidationCase[] => [
  ...notAnObject(op),
  ...mutate(op, bodies.searchPeople, [
    [{ limit: 26 }, 'limit must be <= 25'],
    [{ limit: 0 }, 'limit must be >= 1'],
    [{ limit: 2.5 }, 'limit must be an integer'],
    [{ limit: '10' }, 'limit must be an integer'],
    [{ emailStatuses: ['verified', 'bounced'] }, `emailStatuses[1] ${emailStatusesEnum}`],
    [{ emailStatuses: 'verified' }, 'emailStatuses must be an array'],
    [{ jobtitle: 'CTO' }, 'unknown property jobtitle'],
    ...strings(
      'jobTitle',
      'company',
      'domain',
      'industry',
      'personIndustry',
      'skills',
      'location',
      'companyLocation',
      'revenueRange',
      'language',
    ),
    ...stringLists('technologies'),
    ...enumLists({ seniorities: SENIORITIES, roles: ROLES, companySizes: COMPANY_SIZES, sourceOrder: PEOPLE_SOURCES }),
  ]),
];

const companyCases = (op: OperationId, maxLimit: number): ValidationCase[] => [
  ...notAnObject(op),
  ...mutate(op, bodies.searchCompanies, [
    [{ limit: maxLimit + 1 }, `limit must be <= ${maxLimit}`],
    [{ limit: 0 }, 'limit must be >= 1'],
    [{ limit: 1.5 }, 'limit must be an integer'],
    [{ state: 'SPX' }, 'state must be exactly 2 characters'],
    [{ state: 'S' }, 'state must be exactly 2 characters'],
    [{ capitalMin: -1 }, 'capitalMin must be >= 0'],
    [{ capitalMax: -0.5 }, 'capitalMax must be >= 0'],
    [{ capitalMin: '1000' }, 'capitalMin must be a number'],
    [
      { registrationStatuses: ['ativa'] },
      'registrationStatuses[0] must be one of: ATIVA, BAIXADA, INAPTA, NULA, SUSPENSA',
    ],
    [{ establishmentTypes: ['SEDE'] }, 'establishmentTypes[0] must be one of: MATRIZ, FILIAL'],
    [{ fiscalSizes: ['01', '04'] }, 'fiscalSizes[1] must be one of: 00, 01, 02, 03, 05'],
    [{ fiscalSizes: [1] }, 'fiscalSizes[0] must be a string'],
    [{ openingDateMin: '2020-13-01' }, 'openingDateMin must be a date (YYYY-MM-DD)'],
    [{ openingDateMax: '31/12/2020' }, 'openingDateMax must be a date (YYYY-MM-DD)'],
    [{ cnpj: '11222333000181' }, 'unknown property cnpj'],
    ...booleans('simpleOption', 'hasPhone', 'hasEmail'),
    ...strings('name', 'industry', 'location', 'partnerName', 'partnerDocument', 'city', 'state'),
    ...stringLists('keywords', 'sizes', 'cnaes', 'legalNatureCodes'),
    ...enumLists({ companyOrder: COMPANY_SOURCES }),
  ]),
];

export const validationCases: ValidationCase[] = [
  ...peopleCases('searchPeople'),
  ...peopleCases('streamPeople'),

  ...notAnObject('hydratePeople'),
  ...missing('hydratePeople', bodies.hydratePeople, 'leads'),
  ...mutate('hydratePeople', bodies.hydratePeople, [
    [{ leads: list(26, (i) => ({ name: `Lead ${i}` })) }, 'leads must have at most 25 items'],
    [{ leads: [{ name: 'Ana' }, 'Bruno'] }, 'leads[1] must be a JSON object'],
    [{ leads: { name: 'Ana' } }, 'leads must be an array'],
    [{ lead: [] }, 'unknown property lead'],
  ]),

  ...companyCases('searchCompanies', 20),
  ...companyCases('streamCompanies', 25),
  // Search pages (issue 32): the plain searches take a cursor, a string (or null for the first page); the streams none.
  ...(['searchCompanies', 'searchPeople'] as const).flatMap((op) =>
    mutate(op, op === 'searchCompanies' ? bodies.searchCompanies : bodies.searchPeople, [
      [{ cursor: 5 }, 'cursor must be a string or null'],
      [{ cursor: ['sc1_'] }, 'cursor must be a string or null'],
    ]),
  ),
  ...mutate('streamCompanies', bodies.searchCompanies, [[{ cursor: 'sc1_' }, 'unknown property cursor']]),
  ...mutate('streamPeople', bodies.searchPeople, [[{ cursor: 'sc1_' }, 'unknown property cursor']]),

  ...notAnObject('exportCompanies'),
  ...missing('exportCompanies', { format: 'csv' }, 'format'),
  ...mutate('exportCompanies', { format: 'csv' }, [
    [{ format: 'xlsx' }, 'format must be one of'],
    [{ maxRows: 0 }, 'maxRows must be >= 1'],
    [{ maxRows: 1_000_001 }, 'maxRows must be <= 1000000'],
    [{ companyOrder: ['receita_federal'] }, 'unknown property companyOrder'],
    [{ webhook: { url: 'https://example.com/hook', secret: 'x'.repeat(16), events: ['job.item'] } }, 'unknown property webhook.events'],
  ]),

  ...notAnObject('searchCompanyChanges'),
  ...mutate('searchCompanyChanges', {}, [
    [{ cnpjs: [] }, 'cnpjs must have at least 1 item'],
    [{ cnpjs: list(501, (i) => cnpj(11222333 + i)) }, 'cnpjs must have at most 500 items'],
    [{ kinds: ['moved'] }, 'kinds[0] must be one of'],
    [{ since: 'October' }, 'since must match'],
    [{ limit: 101 }, 'limit must be <= 100'],
    [{ companyOrder: ['receita_federal'] }, 'unknown property companyOrder'],
  ]),
  ...notAnObject('createWatch'),
  ...missing('createWatch', { name: 'w', cnpjs: [cnpj(11222333)], webhook: { url: 'https://example.com/hook', secret: 'x'.repeat(16) } }, 'name', 'webhook'),
  ...mutate('createWatch', { name: 'w', webhook: { url: 'https://example.com/hook', secret: 'x'.repeat(16) } }, [
    [{ cnpjs: list(10_001, (i) => cnpj(11222333 + i)) }, 'cnpjs must have at most 10000 items'],
    [{ name: 'x'.repeat(121) }, 'name must be at most 120 characters'],
    [{ webhook: { url: 'https://example.com/hook', secret: 'short' } }, 'webhook.secret must be at least 16 characters'],
    [{ filters: { state: 'SP', color: 'blue' } }, 'unknown property filters.color'],
  ]),

  ...notAnObject('lookupCnpjBatch'),
  ...missing('lookupCnpjBatch', bodies.lookupCnpjBatch, 'cnpjs'),
  ...mutate('lookupCnpjBatch', bodies.lookupCnpjBatch, [
    [{ cnpjs: [] }, 'cnpjs must have at least 1 item'],
    [{ cnpjs: list(501, (i) => cnpj(11222333 + i)) }, 'cnpjs must have at most 500 items'],
    [{ cnpjs: [11222333000181] }, 'cnpjs[0] must be a string'],
    [{ cnpjs: '11222333000181' }, 'cnpjs must be an array'],
    [{ cnpj: '11222333000181' }, 'unknown property cnpj'],
  ]),

  ...notAnObject('enrich'),
  ...[{}, { goalFields: ['phone'], onlyListed: true }].map(
    (input): ValidationCase => ({
      op: 'enrich',
      part: 'body',
      input,
      field:
        'at least one of email, personalEmail, linkedinUrl, phone, fullName, companyName, companyDomain, cnpj ' +
        'is required',
    }),
  ),
  ...mutate('enrich', bodies.enrich, [
    [{ email: 'ana.souza.acme.com.br' }, 'email must be a valid email'],
    [{ personalEmail: 'ana@' }, 'personalEmail must be a valid email'],
    [{ linkedinUrl: 'linkedin ana souza' }, 'linkedinUrl must be a valid URI'],
    [{ linkedin: 'https://www.linkedin.com/in/ana' }, 'unknown property linkedin'],
    ...strings('phone', 'fullName', 'companyName', 'companyDomain', 'cnpj'),
    ...enumLists({ goalFields: ENRICH_FIELDS }),
    // providerOrder: a list for every field, or an object giving fields their own lists (issue 32), of the
    // providers' ids: unknown names are refused by the schema too (issue 43).
    [{ providerOrder: PROVIDER_IDS[0] }, 'providerOrder must be an array or a JSON object'],
    [{ providerOrder: [PROVIDER_IDS[0], 2] }, 'providerOrder[1] must be'],
    [{ providerOrder: [PROVIDER_IDS[0], 'nonsense'] }, `providerOrder[1] must be one of: ${PROVIDER_IDS.join(', ')}`],
    [{ providerOrder: { email: PROVIDER_IDS[0] } }, 'providerOrder.email must be an array'],
    [{ maxAge: -1 }, 'maxAge must be >= 0'],
    [{ maxAge: 31_536_001 }, 'maxAge must be <= 31536000'],
    [{ maxAge: 60.5 }, 'maxAge must be an integer'],
    ...booleans('forceRefresh'),
    [{ maxCredits: -1 }, 'maxCredits must be >= 0'],
    ...booleans('onlyListed'),
  ]),

  ...notAnObject('research'),
  ...missing('research', bodies.research, 'prompt'),
  ...mutate('research', bodies.research, [
    [{ prompt: '' }, 'prompt must not be empty'],
    [{ columns: { id: 'c1' } }, 'columns must be an array'],
    [{ columns: ['Company'] }, 'columns[0] must be a JSON object'],
    ...['id', 'label', 'value'].map(
      (key): Mutation => [{ columns: [omit(column, key)] }, `columns[0].${key} is required`],
    ),
    [{ columns: [{ ...column, label: 3 }] }, 'columns[0].label must be a string'],
    [{ columns: [{ ...column, note: 'x' }] }, 'unknown property columns[0].note'],
    [{ web_search: true }, 'unknown property web_search'],
    ...strings('prompt', 'name', 'company', 'companyDomain', 'website', 'linkedinUrl'),
    ...booleans('webSearch'),
  ]),

  ...notAnObject('aiColumn'),
  ...missing('aiColumn', bodies.aiColumn, 'instruction'),
  ...mutate('aiColumn', bodies.aiColumn, [
    [{ instruction: '' }, 'instruction must not be empty'],
    [{ instruction: ['Write'] }, 'instruction must be a string'],
    [{ Age: 42 }, 'Age must be a string'],
    [{ Tags: ['vip'] }, 'Tags must be a string'],
  ]),

  ...notAnObject('createTemplate'),
  ...missing('createTemplate', bodies.createTemplate, 'name', 'offering'),
  ...mutate('createTemplate', bodies.createTemplate, [
    ...maxLengths(templateLimits),
    [{ name: '' }, 'name must not be empty'],
    [{ offering: '' }, 'offering must not be empty'],
    [{ templateName: 'x' }, 'unknown property templateName'],
    ...strings(...Object.keys(templateLimits)),
  ]),

  notUuid('updateTemplate', 'templateId'),
  ...notAnObject('updateTemplate'),
  ...mutate('updateTemplate', bodies.updateTemplate, [
    ...maxLengths(templateLimits),
    [{ name: '' }, 'name must not be empty'],
    [{ templateId }, 'unknown property templateId'],
    ...strings(...Object.keys(templateLimits)),
  ]),

  notUuid('deleteTemplate', 'templateId'),

  ...notAnObject('createCampaign'),
  // Without a template, both are required: the schema says so (issue 43).
  { op: 'createCampaign', part: 'body', input: { offering: 'Outbound SDR as a service' }, field: 'templateId, or name and offering is required' },
  // name and offering may come from the template: the handler requires them (outreach.test.ts).
  ...mutate('createCampaign', bodies.createCampaign, [
    ...maxLengths(campaignLimits),
    [{ name: '' }, 'name must not be empty'],
    [{ sheetId: 'sheet-1' }, 'sheetId must be a UUID'],
    [{ templateId: 'SaaS founders' }, 'templateId must be a UUID'],
    [{ sheetId, rowIds: list(26, (i) => `row-${i}`) }, 'rowIds must have at most 25 items'],
    [{ sheetId, rowIds: 'row-1' }, 'rowIds must be an array'],
    [{ sheetId, rowIds: [1] }, 'rowIds[0] must be a string'],
    [{ sheetId, rowIds: [''] }, 'rowIds[0] must not be empty'],
    [{ sheetId, rowIds: ['row-1', chars(65)] }, 'rowIds[1] must be at most 64 characters'],
    [{ campaignName: 'Q3' }, 'unknown property campaignName'],
    ...strings(...Object.keys(campaignLimits)),
  ]),

  notUuid('getCampaign', 'campaignId'),

  notUuid('updateCampaign', 'campaignId'),
  ...notAnObject('updateCampaign'),
  ...mutate('updateCampaign', bodies.updateCampaign, [
    ...maxLengths(campaignUpdateLimits),
    [{ name: '' }, 'name must not be empty'],
    [{ language: 'en' }, 'unknown property language'],
    ...strings(...Object.keys(campaignUpdateLimits)),
  ]),

  notUuid('updateCadence', 'campaignId'),
  ...notAnObject('updateCadence'),
  ...missing('updateCadence', bodies.updateCadence, 'steps'),
  ...mutate('updateCadence', bodies.updateCadence, [
    [{ steps: [] }, 'steps must have at least 1 item'],
    [{ steps: list(21, (day) => ({ ...step, day })) }, 'steps must have at most 20 items'],
    [{ steps: step }, 'steps must be an array'],
    [{ steps: [step, 'day 3: call'] }, 'steps[1] must be a JSON object'],
    [{ steps: [{ ...step, day: -1 }] }, 'steps[0].day must be >= 0'],
    [{ steps: [{ ...step, day: 1.5 }] }, 'steps[0].day must be an integer'],
    [{ steps: [{ ...step, day: '3' }] }, 'steps[0].day must be an integer'],
    [{ steps: [step, { ...step, channel: 'sms' }] }, 'steps[1].channel must be one of: email, linkedin, whatsapp'],
    [{ steps: [{ ...step, subject: chars(301) }] }, 'steps[0].subject must be at most 300 characters'],
    [{ steps: [{ ...step, body: chars(5001) }] }, 'steps[0].body must be at most 5000 characters'],
    [{ steps: [{ ...step, subject: 7 }] }, 'steps[0].subject must be a string'],
    [{ steps: [{ ...step, body: null }] }, 'steps[0].body must be a string'],
    ...['day', 'channel', 'body'].map((key): Mutation => [{ steps: [omit(step, key)] }, `steps[0].${key} is required`]),
    [{ steps: [{ ...step, delay: 2 }] }, 'unknown property steps[0].delay'],
    [{ prospectId: 'ana' }, 'prospectId must be a UUID'],
    [{ campaignId }, 'unknown property campaignId'],
  ]),

  notUuid('addProspects', 'campaignId'),
  ...notAnObject('addProspects'),
  ...missing('addProspects', bodies.addProspects, 'sheetId', 'rowIds'),
  ...mutate('addProspects', bodies.addProspects, [
    [{ sheetId: 'Leads SP' }, 'sheetId must be a UUID'],
    [{ rowIds: [] }, 'rowIds must have at least 1 item'],
    [{ rowIds: list(26, (i) => `row-${i}`) }, 'rowIds must have at most 25 items'],
    [{ rowIds: [chars(65)] }, 'rowIds[0] must be at most 64 characters'],
    [{ rowIds: [''] }, 'rowIds[0] must not be empty'],
    [{ rowIds: [7] }, 'rowIds[0] must be a string'],
    [{ rowIds: 'row-1' }, 'rowIds must be an array'],
    [{ rows: ['row-1'] }, 'unknown property rows'],
  ]),

  { op: 'listProspects', part: 'query', input: { campaignId: 'q3' }, field: 'campaignId must be a UUID' },
  { op: 'listProspects', part: 'query', input: { status: 'done' }, field: `status ${prospectStatusEnum}` },
  { op: 'listProspects', part: 'query', input: { status: ['ready', 'paused'] }, field: 'status must be a string' },
  { op: 'listProspects', part: 'query', input: { stauts: 'ready' }, field: 'unknown property stauts' },

  notUuid('getProspect', 'prospectId'),
  notUuid('deleteProspect', 'prospectId'),
  notUuid('listProspectEvents', 'prospectId'),

  notUuid('updateProspect', 'prospectId'),
  ...notAnObject('updateProspect'),
  ...mutate('updateProspect', bodies.updateProspect, [
    [{ status: 'done' }, `status ${prospectStatusEnum}`],
    ...maxLengths({ connectionNote: 300, emailSubject: 300, emailBody: 5000 }),
    ...strings('status', 'connectionNote', 'emailSubject', 'emailBody'),
    [{ context: {} }, 'unknown property context'],
  ]),

  ...notAnObject('createSheet'),
  ...missing('createSheet', bodies.createSheet, 'name', 'rows'),
  ...mutate('createSheet', bodies.createSheet, [
    [{ name: '' }, 'name must not be empty'],
    ...maxLengths({ name: 120 }),
    ...strings('name'),
    [{ rows: list(1001, row) }, 'rows must have at most 1000 items'],
    [{ rows: row(1) }, 'rows must be an array'],
    [{ rows: [{ values: {} }] }, 'rows[0].rowId is required'],
    [{ rows: [{ rowId: 'row-1' }] }, 'rows[0].values is required'],
    [{ rows: [{ rowId: chars(65), values: {} }] }, 'rows[0].rowId must be at most 64 characters'],
    [{ rows: [{ rowId: '', values: {} }] }, 'rows[0].rowId must not be empty'],
    [{ rows: [{ rowId: 3, values: {} }] }, 'rows[0].rowId must be a string'],
    [
      { rows: [...list(3, row), { rowId: 'row-3', values: { Email: chars(5001) } }] },
      'rows[3].values.Email must be at most 5000 characters',
    ],
    [{ rows: [{ rowId: 'row-1', values: { Age: 42 } }] }, 'rows[0].values.Age must be a string'],
    [{ rows: [{ rowId: 'row-1', values: ['Ana'] }] }, 'rows[0].values must be a JSON object'],
    [{ rows: [{ ...row(1), rowNumber: 2 }] }, 'unknown property rows[0].rowNumber'],
    [{ sheetId }, 'unknown property sheetId'],
  ]),

  notUuid('upsertSheetRows', 'sheetId'),
  ...notAnObject('upsertSheetRows'),
  ...missing('upsertSheetRows', bodies.upsertSheetRows, 'rows'),
  ...mutate('upsertSheetRows', bodies.upsertSheetRows, [
    [{ rows: list(1001, row) }, 'rows must have at most 1000 items'],
    [
      { rows: [{ rowId: 'row-1', values: { Notes: chars(5001) } }] },
      'rows[0].values.Notes must be at most 5000 characters',
    ],
    [{ rows: [{ rowId: chars(65), values: {} }] }, 'rows[0].rowId must be at most 64 characters'],
    [{ name: 'Renamed' }, 'unknown property name'],
  ]),

  notUuid('getSheet', 'sheetId'),
  notUuid('deleteSheet', 'sheetId'),

  ...notAnObject('agentChat'),
  ...missing('agentChat', { message: 'hi' }, 'message'),
  ...mutate('agentChat', { message: 'hi' }, [
    [{ message: '' }, 'message must not be empty'],
    [{ message: chars(4001) }, 'message must be at most 4000 characters'],
    [{ conversationId: 'nope' }, 'conversationId must be a UUID'],
    [{ maxCredits: -1 }, 'maxCredits must be >= 0'],
    [{ context: { header: [], rows: list(201, () => []) } }, 'context.rows must have at most 200 items'],
    [{ instructions: 'be evil' }, 'unknown property instructions'],
  ]),
  notUuid('getConversation', 'conversationId'),

  ...notAnObject('createApiKey'),
  ...missing('createApiKey', { name: 'k' }, 'name'),
  ...mutate('createApiKey', { name: 'k' }, [
    [{ name: '' }, 'name must not be empty'],
    [{ name: chars(101) }, 'name must be at most 100 characters'],
    [{ scopes: ['credits:read'] }, 'unknown property scopes'],
  ]),
  notUuid('revokeApiKey', 'keyId'),
];
