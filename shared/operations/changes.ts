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
      'What changed per establishment between releases (each field `{from, to}`), by CNPJs, kinds and company ' +
      'filters, `since` a release (default: the latest), newest first. Costs 1 credit per change returned.',
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
      'After each newer release is imported, its changes matching the watch (CNPJs or filters, and kinds) are POSTed ' +
      'to its webhook, signed, 500 at most a delivery. Free to create; 1 credit per change delivered, charged before ' +
      'sending; a balance that cannot pay pauses the watch until resumed.',
    ...ofWatches,
    request: { body: WatchCreateBody },
    responses: { 201: Watch },
    errors: [400, 401, 402, 429, 500],
  },
  listWatches: {
    method: 'GET',
    path: '/api/watches',
    summary: 'List watches',
    description: "The workspace's watches, newest first.",
    ...ofWatches,
    request: {},
    responses: { 200: WatchList },
    errors: [401, 402, 429],
  },
  getWatch: {
    method: 'GET',
    path: '/api/watches/{watchId}',
    summary: 'Get a watch',
    description: 'A watch, its status and last delivery.',
    ...ofWatches,
    request: { params: WatchParams },
    responses: { 200: Watch },
    errors: [400, 401, 402, 404, 429],
  },
  resumeWatch: {
    method: 'POST',
    path: '/api/watches/{watchId}/resume',
    summary: 'Resume a watch',
    description: 'Makes a paused watch active again: what it missed is sent.',
    ...ofWatches,
    request: { params: WatchParams, body: WatchResumeBody },
    responses: { 200: Watch },
    errors: [400, 401, 402, 404, 429],
  },
  deleteWatch: {
    method: 'DELETE',
    path: '/api/watches/{watchId}',
    summary: 'Delete a watch',
    description: 'Nothing more is sent for it.',
    ...ofWatches,
    request: { params: WatchParams },
    responses: { 200: Deleted },
    errors: [400, 401, 402, 404, 429],
  },
});
