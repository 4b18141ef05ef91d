/** Web research on a record and AI-generated column values. */
import { Type } from '@sinclair/typebox';
import { ClosedObject, CreditsCharged, OptionalText as text } from './common.ts';

const Column = Type.Object(
  {
    id: Type.String({ description: 'Column identifier.' }),
    label: Type.String({ description: 'Column label, as shown in the sheet.' }),
    value: Type.String({ maxLength: 50_000, description: 'The cell value of this row.' }),
  },
  { additionalProperties: false, description: 'One cell of the row, as context.' },
);

export const ResearchBody = Type.Object(
  {
    prompt: Type.String({ minLength: 1, description: 'What to find out about the record.' }),
    name: text("The person's name."),
    company: text('Company name.'),
    companyDomain: text('Company web domain.'),
    website: text('Website to read.'),
    linkedinUrl: text('Professional-network profile URL.'),
    webSearch: Type.Optional(Type.Boolean({ description: 'Also search the web (costs more).' })),
    columns: Type.Optional(Type.Array(Column, { description: 'Other cells of the row, as context.' })),
  },
  { additionalProperties: false, description: 'A research prompt; the other fields serve as row context.' },
);

const Citation = ClosedObject('A source the answer cites.', {
  url: Type.String({ description: 'Address of the page.' }),
  title: Type.String({ description: 'Its title.' }),
});

const ResearchSource = ClosedObject('A page gathered for the answer.', {
  url: Type.String({ description: 'Address of the page.' }),
  title: Type.String({ description: 'Its title.' }),
  read: Type.Boolean({ description: 'Whether the page itself was read (otherwise only the search snippet was used).' }),
  error: Type.Optional(Type.String({ description: 'Why the page could not be read.' })),
});

export const ResearchResult = ClosedObject(
  'The research result.',
  {
    answer: Type.String({ description: 'A few sentences answering the prompt.' }),
    citations: Type.Array(Citation, { description: 'The sources the answer used.' }),
    webSearch: Type.Boolean({ description: 'Whether the web was searched.' }),
    sources: Type.Array(ResearchSource, { description: 'The pages gathered (none without `webSearch`).' }),
    creditsCharged: CreditsCharged,
  },
  { title: 'ResearchResult' },
);

/** Every property besides `instruction` is row context and must be a string. */
export const AiColumnBody = Type.Unsafe<{ instruction: string } & Record<string, string>>(
  Type.Object(
    { instruction: Type.String({ minLength: 1, description: 'What value to generate.' }) },
    {
      additionalProperties: Type.String({ maxLength: 50_000, description: 'Row context: column label → cell value.' }),
      description: 'An instruction; every other property is a string of row context.',
    },
  ),
);

export const AiColumnResult = ClosedObject(
  'The generated value.',
  {
    value: Type.String({ description: 'A short generated value.' }),
    cached: Type.Boolean({ description: 'Served from the cache of the same instruction and row (then free).' }),
    creditsCharged: CreditsCharged,
  },
  { title: 'AiColumnResult' },
);
