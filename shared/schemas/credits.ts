/** The credit balance, the workspace's plan and its most recent ledger movements. */
import { Type } from '@sinclair/typebox';
import { ClosedObject, DateOnly, IdOf, Nullable, StringEnum, Timestamp } from './common.ts';

export const PLANS = ['none', 'trial', 'active'] as const;

const movementProperties = {
    movementId: IdOf('The movement.'),
    at: Timestamp,
    amount: Type.Integer({ description: 'Credits added; negative for a debit.' }),
    balanceAfter: Type.Integer({ description: 'The balance once it was applied.' }),
    operation: Type.String({ description: 'The operation id that moved credits, or `trial_grant`, `grant`, `refund:<operation>`, `trial_expired`.' }),
    detail: Type.String({ description: 'What it was for, in words.' }),
};

const Movement = ClosedObject('One ledger movement.', movementProperties, { title: 'Movement' });

export const Credits = ClosedObject(
  'Balance, total consumption, plan and recent movements.',
  {
    balance: Type.Integer({ minimum: 0, description: 'Credits available.' }),
    consumed: Type.Integer({ minimum: 0, description: 'Credits spent since the workspace was created.' }),
    plan: ClosedObject('The plan of the workspace.', {
      name: StringEnum(PLANS, { description: '`trial`, `active`, or `none` (no plan).' }),
      expiresAt: Nullable(Timestamp, 'When a trial ends; null for other plans.'),
    }),
    movements: Type.Array(Movement, { description: 'The 50 most recent movements, newest first.' }),
  },
  { title: 'Credits' },
);

/** The most movements one page of the ledger holds. */
export const MAX_LEDGER_PAGE = 200;

export const LedgerQuery = ClosedObject('Which page of the ledger.', {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LEDGER_PAGE, default: 50, description: 'Movements per page.' })),
  before: Type.Optional(
    Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Only movements older than this `seq`: the `nextBefore` of the previous page.' }),
  ),
  operation: Type.Optional(
    Type.String({ minLength: 1, maxLength: 100, description: 'Only the movements of this operation id (or `grant`, `trial_grant`, `refund:<operation>`…).' }),
  ),
});

export const LedgerPage = ClosedObject(
  'One page of the ledger, newest first.',
  {
    movements: Type.Array(
      ClosedObject('One ledger movement and its place in the ledger.', {
        ...movementProperties,
        seq: Type.Integer({ minimum: 1, description: 'Its order in the workspace\'s ledger; later movements have larger numbers.' }),
      }),
      { description: 'At most `limit` movements, newest first.' },
    ),
    nextBefore: Nullable(Type.Integer({ minimum: 1 }), 'Pass as `before` for the next (older) page; null on the last page.'),
  },
  { title: 'LedgerPage' },
);

/** The longest consumption history one answer covers. */
export const MAX_USAGE_DAYS = 90;

export const UsageQuery = ClosedObject('Which days.', {
  days: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_USAGE_DAYS, default: 30, description: 'How many days, today (UTC) included.' })),
});

export const Usage = ClosedObject(
  'Credits spent per day.',
  {
    days: Type.Array(
      ClosedObject('One UTC day.', {
        date: DateOnly('The day (UTC).'),
        consumed: Type.Integer({ minimum: 0, description: 'Credits spent by operations that day, net of refunds.' }),
      }),
      { description: 'One entry per day, oldest first, days without consumption included.' },
    ),
    memorySaved: ClosedObject('What the enrichment memory spared this workspace this month (UTC): answers given again, charged nothing.', {
      month: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}$', description: 'The month, `YYYY-MM`.' }),
      credits: Type.Integer({ minimum: 0, description: 'Credits the same enrichments would have cost again.' }),
      answers: Type.Integer({ minimum: 0, description: 'Enrichments answered from memory.' }),
    }),
  },
  { title: 'Usage' },
);
