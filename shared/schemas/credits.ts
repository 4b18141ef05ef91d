/** The credit balance, the workspace's plan and its most recent ledger movements. */
import { Type } from '@sinclair/typebox';
import { IdOf, OpenObject, StringEnum, Timestamp } from './common.ts';

export const PLANS = ['none', 'trial', 'active'] as const;

const Movement = OpenObject('One ledger movement.', {
  movementId: IdOf('The movement.'),
  at: Timestamp,
  amount: Type.Number({ description: 'Credits added; negative for a debit.' }),
  balanceAfter: Type.Number(),
  operation: Type.String({ description: 'The operation or event that moved credits.' }),
  detail: Type.String(),
});

export const Credits = OpenObject('Balance, total consumption and recent movements.', {
  balance: Type.Number(),
  consumed: Type.Number({ description: 'Credits spent since the workspace was created.' }),
  plan: OpenObject('The plan of the workspace.', {
    name: StringEnum(PLANS),
    expiresAt: Type.Union([Timestamp, Type.Null()], { description: 'When a trial ends; null for other plans.' }),
  }),
  movements: Type.Array(Movement, { description: 'The 50 most recent movements, newest first.' }),
});
