/** A cadence: the steps of a campaign's outreach, or of one prospect's override. */
import { Type } from '@sinclair/typebox';
import { ClosedObject, StringEnum } from './common.ts';

/** Ten years: a cadence further out is a typo, and a day past 2^53 would not even be stored exactly. */
export const MAX_CADENCE_DAY = 3650;

export const CHANNELS = ['email', 'linkedin', 'whatsapp'] as const;

export const CadenceStep = ClosedObject(
  'One step of a cadence.',
  {
    day: Type.Integer({ minimum: 0, maximum: MAX_CADENCE_DAY, description: `Days after the start, 0 to ${MAX_CADENCE_DAY}.` }),
    channel: StringEnum(CHANNELS, { description: 'Where the step is sent.' }),
    subject: Type.Optional(Type.String({ maxLength: 300, description: 'Email subject, at most 300 characters.' })),
    body: Type.String({ maxLength: 5000, description: 'Message text, at most 5000 characters.' }),
  },
  { title: 'CadenceStep' },
);

export const Cadence = Type.Array(CadenceStep, { minItems: 1, maxItems: 20, description: '1 to 20 steps.' });
