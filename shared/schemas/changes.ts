/**
 * Registry changes: what changed per establishment between two imported releases, the feed that
 * reads them, and the watches that receive them as signed webhooks (decisions.md, "Registry changes").
 */
import { Type, type Static } from '@sinclair/typebox';
import { AnyName, ClosedObject, CreditsCharged, IdOf, Nullable, NullableText, StringEnum, Timestamp } from './common.ts';
import { companyFilters } from './companies.ts';
import { JobWebhook } from './jobs.ts';
import { Cnpj, CnpjInput, Partner, REGISTRATION_STATUSES } from './registry.ts';
import { NextCursor, SearchCursor } from './search.ts';
import { NOT_BLANK } from './templates.ts';
import { CHANGE_KINDS } from '../change-kinds.ts';

export { CHANGE_FIELDS, CHANGE_KINDS, type ChangeKind } from '../change-kinds.ts';

/** A release, `YYYY-MM`. */
export const ReleaseName = Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$', description: 'An open-data release, `YYYY-MM`.' });

export const MAX_CHANGE_CNPJS = 500;
export const MAX_WATCH_CNPJS = 10_000;
/** At most this many changes in one `registry.changes` delivery. */
export const CHANGES_PER_DELIVERY = 500;

const FieldChange = ClosedObject('A field before and after (null where it had no value).', {
  from: Type.Unknown({ description: 'Its value in the previous release, as the company record gives it.' }),
  to: Type.Unknown({ description: 'Its value in this release.' }),
});
const PartnersChange = ClosedObject('Partners who joined and left.', {
  added: Type.Array(Partner, { description: 'Partners in this release and not the previous one.' }),
  removed: Type.Array(Partner, { description: 'Partners in the previous release and not this one.' }),
});

/** Who the change is about, enough to read a line of the feed without a lookup. */
export const ChangeCompany = ClosedObject(
  'The establishment as in the release of the change (the previous one for `removed`).',
  {
    cnpj: Cnpj,
    name: Type.String({ description: 'Legal name.' }),
    tradeName: NullableText('Trade name.'),
    registrationStatus: Nullable(StringEnum(REGISTRATION_STATUSES), 'Registration status.'),
    city: NullableText('City.'),
    state: NullableText('State (UF).'),
  },
  { title: 'ChangeCompany' },
);

export const Change = ClosedObject(
  'One change of one establishment between two releases.',
  {
    cnpj: Cnpj,
    release: ReleaseName,
    previousRelease: ReleaseName,
    kind: StringEnum(CHANGE_KINDS, { description: 'What changed.' }),
    fields: Type.Record(AnyName, Type.Union([FieldChange, PartnersChange]), {
      additionalProperties: false,
      description:
        'Each changed field of the company record, `{from, to}`; `partners`: `{added, removed}`. Empty for `opened` and `removed`.',
    }),
    company: ChangeCompany,
  },
  { title: 'Change' },
);
export type ChangeRecord = Static<typeof Change>;

const Kinds = Type.Optional(
  Type.Array(StringEnum(CHANGE_KINDS), { minItems: 1, uniqueItems: true, description: 'Only these kinds; all by default.' }),
);

// Only the imported registry has releases, so filters name no sources.
const { companyOrder: _sources, ...filters } = companyFilters;
/** The company search filters a change feed or a watch takes. */
export const changeFilters = filters;

export const ChangesBody = Type.Object(
  {
    cnpjs: Type.Optional(
      Type.Array(CnpjInput('A CNPJ, with or without punctuation.'), {
        minItems: 1,
        maxItems: MAX_CHANGE_CNPJS,
        description: `Only these establishments, 1 to ${MAX_CHANGE_CNPJS}.`,
      }),
    ),
    since: Type.Optional(
      Type.String({
        pattern: '^[0-9]{4}-[0-9]{2}$',
        description: 'Changes of the releases imported after this one, `YYYY-MM`; by default the latest release\'s changes only.',
      }),
    ),
    kinds: Kinds,
    ...filters,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100, description: 'Changes per page, 1 to 100.' })),
    cursor: SearchCursor,
  },
  {
    additionalProperties: false,
    description: 'Which changes: by CNPJs, kinds, and company search filters applied to the establishment as in the latest release.',
  },
);

export const ChangeResults = ClosedObject(
  'Changes, newest release first, then by CNPJ.',
  {
    changes: Type.Array(Change, { description: 'Newest release first, then by CNPJ and kind.' }),
    nextCursor: NextCursor,
    releases: ClosedObject('The releases compared.', {
      from: Nullable(ReleaseName, 'The release the changes start from (`since`, or the one before the latest); null before two imports.'),
      to: Nullable(ReleaseName, 'The latest release; null before any import.'),
    }),
    creditsCharged: CreditsCharged,
  },
  { title: 'ChangeResults' },
);

// ---- Watches ----

export const WATCH_STATUSES = ['active', 'paused'] as const;
export const WATCH_PAUSED_REASONS = ['insufficient_credits', 'plan_required'] as const;

export const WatchCreateBody = ClosedObject('A watch: which establishments, which kinds, and where to send their changes.', {
  // Not blank, and stored trimmed, as every name; said in few words, as the tool list is paid for.
  name: Type.String({ minLength: 1, maxLength: 120, pattern: NOT_BLANK, description: 'A name, at most 120 characters.' }),
  cnpjs: Type.Optional(
    Type.Array(CnpjInput('A CNPJ, with or without punctuation.'), {
      minItems: 1,
      maxItems: MAX_WATCH_CNPJS,
      description: `These establishments, 1 to ${MAX_WATCH_CNPJS.toLocaleString('en')}.`,
    }),
  ),
  filters: Type.Optional(
    Type.Object(filters, {
      additionalProperties: false,
      // Empty, they would stand for no filter at all: every change of the whole registry. The
      // body's anyOf says that `cnpjs` or these are required.
      minProperties: 1,
      description: 'Company search filters, as of the new release.',
    }),
  ),
  kinds: Kinds,
  webhook: ClosedObject('Where to POST its deliveries, signed as jobs\' are.', {
    url: JobWebhook.properties.url,
    secret: JobWebhook.properties.secret,
  }),
}, {
  // Each branch names one field, so a failure reads "at least one of cnpjs, filters is required".
  anyOf: [{ required: ['cnpjs'] }, { required: ['filters'] }],
});

export const Watch = ClosedObject(
  'A watch on registry changes.',
  {
    watchId: IdOf('The watch.'),
    name: Type.String({ description: 'Its name.' }),
    cnpjs: Type.Optional(Type.Integer({ minimum: 1, description: 'How many CNPJs it watches, when it watches CNPJs.' })),
    filters: Type.Optional(Type.Object(filters, { additionalProperties: false, description: 'Its company search filters, when it has some.' })),
    kinds: Type.Array(StringEnum(CHANGE_KINDS), { description: 'The kinds it receives.' }),
    status: StringEnum(WATCH_STATUSES, { description: '`active`, or `paused` (see `pausedReason`): nothing is sent while paused.' }),
    pausedReason: Type.Optional(StringEnum(WATCH_PAUSED_REASONS, { description: 'Why it paused: the balance could not pay a delivery, or the workspace has no plan.' })),
    createdAt: Timestamp,
    lastDelivery: Type.Optional(
      ClosedObject('The last delivery sent.', {
        release: ReleaseName,
        changes: Type.Integer({ minimum: 0, description: 'Changes it held.' }),
        at: Timestamp,
      }),
    ),
  },
  { title: 'Watch' },
);
export type WatchView = Static<typeof Watch>;

export const WatchList = ClosedObject('The workspace\'s watches, newest first.', { watches: Type.Array(Watch, { description: 'Newest first.' }) });

export const WatchParams = Type.Object({ watchId: IdOf('The watch.') }, { additionalProperties: false });

/** A resume takes no body (an empty object at most). */
export const WatchResumeBody = ClosedObject('Nothing: the watch is named by the path.', {});

/** The JSON body of a `registry.changes` webhook delivery. */
export const WatchDelivery = ClosedObject(
  'A `registry.changes` delivery: part of one release\'s matching changes.',
  {
    type: StringEnum(['registry.changes'] as const, { description: 'Always `registry.changes`.' }),
    watchId: IdOf('The watch.'),
    release: ReleaseName,
    previousRelease: ReleaseName,
    changes: Type.Array(Change, { maxItems: CHANGES_PER_DELIVERY, description: `At most ${CHANGES_PER_DELIVERY} changes, by CNPJ.` }),
    part: Type.Integer({ minimum: 1, description: 'This delivery\'s number among the release\'s, from 1.' }),
    parts: Type.Integer({ minimum: 1, description: 'How many deliveries the release\'s changes take.' }),
    at: Timestamp,
  },
  { title: 'WatchDelivery' },
);
export type WatchDeliveryBody = Static<typeof WatchDelivery>;
