/**
 * Registry changes: the feed of what changed between imported releases, and watches that receive
 * each new release's matching changes as signed webhooks. Scope and plan as the search's.
 */
import { Deleted } from '../schemas/common.ts';
import { ChangeResults, ChangesBody, Watch, WatchCreateBody, WatchList, WatchParams, WatchResumeBody } from '../schemas/changes.ts';
import { defineOperations } from './types.ts';

/** What the watch operations share: the search's scope and plan, and free. */
const ofWatches = {
  tag: 'Watches',
  scope: 'search:write',
  requiresPlan: true,
  credits: { rule: 'free' },
  extension: true,
} as const;

export const changeOperations = defineOperations({
  searchCompanyChanges: {
    method: 'POST',
    path: '/api/companies/changes',
    summary: 'Registry changes',
    description:
      'What changed per establishment between imported releases (opened, removed, status, name, address, contact, ' +
      'activity, partners, capital, size, simples, legal nature), each changed field `{from, to}`: by CNPJs, kinds and ' +
      'company search filters (applied as in the latest release), `since` a release (default: the latest release\'s ' +
      'changes). Newest release first, then by CNPJ; a page at a time (`cursor`, `nextCursor`). Costs 1 credit per change returned.',
    tag: 'Search',
    scope: 'search:write',
    requiresPlan: true,
    credits: { rule: 'per_result', unit: 'change', cost: 1 },
    request: { body: ChangesBody },
    responses: { 200: ChangeResults },
    errors: [400, 401, 402, 429, 500],
    extension: true,
  },
  createWatch: {
    method: 'POST',
    path: '/api/watches',
    summary: 'Create a watch',
    description:
      'After each import of a newer release, the changes matching the watch (its CNPJs, or its company search filters, ' +
      'and its kinds) are POSTed to its webhook as signed `registry.changes` deliveries of at most 500 changes, each ' +
      'charged 1 credit per change before it is sent. When the balance cannot pay, the watch pauses ' +
      '(`pausedReason: "insufficient_credits"`) until resumed. Creating one is free.',
    ...ofWatches,
    request: { body: WatchCreateBody },
    responses: { 201: Watch },
    errors: [400, 401, 402, 429, 500],
  },
  listWatches: {
    method: 'GET',
    path: '/api/watches',
    summary: 'List watches',
    description: "The workspace's watches, newest first, with each one's last delivery.",
    ...ofWatches,
    request: {},
    responses: { 200: WatchList },
    errors: [401, 402, 429],
  },
  getWatch: {
    method: 'GET',
    path: '/api/watches/{watchId}',
    summary: 'Get a watch',
    description: 'A watch, its status and its last delivery.',
    ...ofWatches,
    request: { params: WatchParams },
    responses: { 200: Watch },
    errors: [400, 401, 402, 404, 429],
  },
  resumeWatch: {
    method: 'POST',
    path: '/api/watches/{watchId}/resume',
    summary: 'Resume a watch',
    description: 'Makes a paused watch active again and sends what it missed while paused. An active watch is answered as it is.',
    ...ofWatches,
    request: { params: WatchParams, body: WatchResumeBody },
    responses: { 200: Watch },
    errors: [400, 401, 402, 404, 429],
  },
  deleteWatch: {
    method: 'DELETE',
    path: '/api/watches/{watchId}',
    summary: 'Delete a watch',
    description: 'Nothing more is sent for it; deliveries already sent stay charged.',
    ...ofWatches,
    request: { params: WatchParams },
    responses: { 200: Deleted },
    errors: [400, 401, 402, 404, 429],
  },
});
