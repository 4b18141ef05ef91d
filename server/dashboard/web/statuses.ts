/** The six prospect statuses, in pipeline order, with the words the dashboard shows for them. */
import type { OutputOf } from '../../../shared/operations/index.ts';

export type ProspectStatus = OutputOf<'updateProspect'>['status'];

export const STATUS_LABELS: Record<ProspectStatus, string> = {
  ready: 'Ready',
  sending: 'Sending',
  awaiting_reply: 'Awaiting reply',
  replied: 'Replied',
  paused: 'Paused',
  failed: 'Failed',
};

export const STATUSES = Object.keys(STATUS_LABELS) as ProspectStatus[];
