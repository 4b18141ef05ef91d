/** The credit balance, the workspace's plan and its most recent ledger movements. */
import { Type } from '@sinclair/typebox';
import { ClosedObject, IdOf, Nullable, StringEnum, Timestamp } from './common.ts';

export const PLANS = ['none', 'trial', 'active'] as const;

const Movement = ClosedObject(
  'One ledger movement.',
  {
    movementId: IdOf('The movement.'),
    at: Timestamp,
    amount: Type.Integer({ description: 'Credits added; negative for a debit.' }),
    balanceAfter: Type.Integer({ description: 'The balance once it was applied.' }),
    operation: Type.String({ description: 'The operation id that moved credits, or `trial_grant`, `grant`, `refund:<operation>`, `trial_expired`.' }),
    detail: Type.String({ description: 'What it was for, in words.' }),
  },
  { title: 'Movement' },
);

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
