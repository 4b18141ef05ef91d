import {
  CnpjBatchBody,
  CnpjBatchResults,
  CompanyPage,
  CompanyResults,
  CompanySearchBody,
  CompanyStreamBody,
  CompanyStreamDone,
} from '../schemas/companies.ts';
import { ExportBody, ExportStarted } from '../schemas/exports.ts';
import { HydrateBody, HydrateResults, PeoplePage, PeoplePagedBody, PeopleResults, PeopleSearchBody, StreamDone } from '../schemas/search.ts';
import { defineOperations } from './types.ts';

const searchErrors = [400, 401, 402, 429, 500];
const streamDescription =
  ' Answers `text/event-stream`: a `page` event each time a source adds rows, then one `done` event with the ' +
  "totals per source; each event's `data` is JSON of its payload's schema (`contentSchema`).";

export const searchOperations = defineOperations({
  searchPeople: {
    method: 'POST',
    path: '/api/sourcing/people',
    summary: 'Search people',
    description:
      'People matching the filters, across the configured sources, a page at a time (`cursor`, `nextCursor`; at most ' +
      '1,000 rows per search). Costs 1 credit per row returned.',
    tag: 'Search',
    scope: 'search:write',
    requiresPlan: true,
    credits: { rule: 'per_result', unit: 'row', cost: 1 },
    request: { body: PeoplePagedBody },
    responses: { 200: PeopleResults },
    errors: searchErrors,
  },
  streamPeople: {
    method: 'POST',
    path: '/api/sourcing/people/stream',
    summary: 'Search people, streamed',
    description: `The people search, sent as each source answers. Costs 1 credit per row sent.${streamDescription}`,
    tag: 'Search',
    scope: 'search:write',
    requiresPlan: true,
    credits: { rule: 'per_result', unit: 'row', cost: 1 },
    request: { body: PeopleSearchBody },
    responses: { 200: PeoplePage },
    errors: searchErrors,
    stream: { events: { page: PeoplePage, done: StreamDone } },
  },
  hydratePeople: {
    method: 'POST',
    path: '/api/sourcing/people/hydrate',
    summary: 'Hydrate people',
    description: 'Enriches up to 25 people already found by a search. Costs 1 credit per lead enriched; a person the workspace paid for within `maxAge` comes from its memory, free.',
    tag: 'Search',
    scope: 'search:write',
    requiresPlan: true,
    credits: { rule: 'per_result', unit: 'lead', cost: 1 },
    request: { body: HydrateBody },
    responses: { 200: HydrateResults },
    errors: searchErrors,
  },
  searchCompanies: {
    method: 'POST',
    path: '/api/companies/search',
    summary: 'Search companies',
    description:
      'Companies matching the filters. For Brazil, known activities become CNAE codes and registration, partner ' +
      'and contact filters apply. A page at a time, in CNPJ order (`cursor`, `nextCursor`; at most 1,000 rows per ' +
      'search). Costs 1 credit per row returned.',
    tag: 'Search',
    scope: 'search:write',
    requiresPlan: true,
    credits: { rule: 'per_result', unit: 'row', cost: 1 },
    request: { body: CompanySearchBody },
    responses: { 200: CompanyResults },
    errors: searchErrors,
  },
  streamCompanies: {
    method: 'POST',
    path: '/api/companies/search/stream',
    summary: 'Search companies, streamed',
    description: `The company search, sent as each source answers. Costs 1 credit per row sent.${streamDescription}`,
    tag: 'Search',
    scope: 'search:write',
    requiresPlan: true,
    credits: { rule: 'per_result', unit: 'row', cost: 1 },
    request: { body: CompanyStreamBody },
    responses: { 200: CompanyPage },
    errors: searchErrors,
    stream: { events: { page: CompanyPage, done: CompanyStreamDone } },
  },
  exportCompanies: {
    method: 'POST',
    path: '/api/companies/export',
    summary: 'Export companies',
    description:
      'Every establishment matching the filters (up to `maxRows`, at most 1,000,000), written in CNPJ order to a CSV or ' +
      'NDJSON file by a job: follow it with `GET /api/jobs/{jobId}`, read the file with `GET /api/jobs/{jobId}/export` ' +
      '(kept 7 days). Costs 1 credit per row, charged as rows are written: when the balance runs out the job stops ' +
      '(`stopped`) and the rows paid for stay readable.',
    tag: 'Search',
    scope: 'search:write',
    requiresPlan: true,
    credits: { rule: 'per_result', unit: 'row', cost: 1 },
    request: { body: ExportBody },
    responses: { 202: ExportStarted },
    errors: searchErrors,
    extension: true,
  },
  lookupCnpjBatch: {
    method: 'POST',
    path: '/api/companies/cnpj/batch',
    summary: 'Look up companies by CNPJ',
    description:
      'Up to 500 CNPJs at once. A syntactically invalid CNPJ answers 400 and is never reported as not found. ' +
      'Costs 1 credit per company found.',
    tag: 'Search',
    scope: 'search:write',
    requiresPlan: true,
    credits: { rule: 'per_result', unit: 'company', cost: 1 },
    request: { body: CnpjBatchBody },
    responses: { 200: CnpjBatchResults },
    errors: searchErrors,
  },
});
