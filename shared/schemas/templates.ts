/**
 * Templates, and the outreach configuration fields they share with campaigns ("limits as in
 * Template").
 */
import { Type } from '@sinclair/typebox';
import { ClosedObject, IdOf, Timestamp } from './common.ts';

/** A name: not blank (`\\S`, one character other than white space); stored trimmed. */
export const NOT_BLANK = '\\S';
export const Name = Type.String({ minLength: 1, maxLength: 120, pattern: NOT_BLANK, description: 'Name, 1 to 120 characters, not blank; stored trimmed.' });
export const Offering = Type.String({
  minLength: 1,
  maxLength: 2000,
  description: 'What is being offered, at most 2000 characters.',
});
export const SenderName = Type.String({
  maxLength: 120,
  description: 'Who signs the messages, at most 120 characters.',
});
export const Tone = Type.String({ maxLength: 200, description: 'Tone of the messages, at most 200 characters.' });
export const BusinessContext = Type.String({
  maxLength: 20000,
  description: "The sender's company context, at most 20000 characters.",
});
export const Language = Type.String({ maxLength: 80, description: 'Language of the messages, at most 80 characters.' });

export const TemplateParams = Type.Object({ templateId: IdOf('The template.') }, { additionalProperties: false });

const templateFields = {
  name: Name,
  campaignName: Type.Optional(
    Type.String({ maxLength: 120, description: 'Name for campaigns created from it, at most 120 characters.' }),
  ),
  offering: Offering,
  senderName: Type.Optional(SenderName),
  tone: Type.Optional(Tone),
  businessContext: Type.Optional(BusinessContext),
  language: Type.Optional(Language),
};

export const TemplateCreateBody = Type.Object(templateFields, {
  additionalProperties: false,
  description: 'A template; saving an existing name updates that template.',
});

export const TemplateUpdateBody = Type.Partial(TemplateCreateBody, {
  description: 'Template fields to change; omitted fields keep their value.',
});

export const Template = ClosedObject(
  'A reusable outreach configuration.',
  { templateId: IdOf('The template.'), ...templateFields, createdAt: Timestamp, updatedAt: Timestamp },
  { title: 'Template' },
);

export const TemplateList = ClosedObject(
  'The templates of the workspace.',
  {
    templates: Type.Array(Template, { description: 'By name.' }),
  },
  { title: 'TemplateList' },
);
