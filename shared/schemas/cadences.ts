/** A cadence: the steps of a campaign's outreach, or of one prospect's override. */
import { Type } from '@sinclair/typebox';
import { ClosedObject, StringEnum } from './common.ts';

export const CHANNELS = ['email', 'linkedin', 'whatsapp'] as const;

export const CadenceStep = ClosedObject(
  'One step of a cadence.',
  {
    day: Type.Integer({ minimum: 0, description: 'Days after the start, 0 or more.' }),
    channel: StringEnum(CHANNELS, { description: 'Where the step is sent.' }),
    subject: Type.Optional(Type.String({ maxLength: 300, description: 'Email subject, at most 300 characters.' })),
    body: Type.String({ maxLength: 5000, description: 'Message text, at most 5000 characters.' }),
  },
  { title: 'CadenceStep' },
);

export const Cadence = Type.Array(CadenceStep, { minItems: 1, maxItems: 20, description: '1 to 20 steps.' });
