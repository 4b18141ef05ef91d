/** Schemas shared by several areas. TypeBox values are JSON Schema and TypeScript types at once. */
import {
  CloneType,
  Type,
  type ObjectOptions,
  type SchemaOptions,
  type Static,
  type TObject,
  type TProperties,
  type TSchema,
} from '@sinclair/typebox';

/**
 * The key of a map whose every property name is allowed (`Type.Record(AnyName, …)`): TypeBox's
 * default `^(.*)$` leaves out names holding a line break in JavaScript (`.`), though not in every
 * regex dialect a client validates with.
 */
export const AnyName = Type.String({ pattern: '^[\\s\\S]*$' });

export const Uuid = Type.String({ format: 'uuid', description: 'A UUID.' });

/** A UUID that says what it identifies, e.g. a path parameter. */
export const IdOf = (description: string) => CloneType(Uuid, { description });

export const Timestamp = Type.String({ format: 'date-time', description: 'An ISO 8601 date and time (UTC).' });

/** A calendar date, `YYYY-MM-DD`. */
export const DateOnly = (description: string) => Type.String({ format: 'date', description });

/**
 * A string from a fixed list, as a plain JSON Schema `enum` (TypeBox's unions of literals become
 * `anyOf`, which reads worse in OpenAPI and in validation messages).
 */
export const StringEnum = <const T extends readonly string[]>(values: T, options: SchemaOptions = {}) =>
  Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });

/** A value or null: the records send every field they know of, null when it is unknown. */
export const Nullable = <T extends TSchema>(schema: T, description: string | undefined = schema.description) =>
  Type.Union([schema, Type.Null()], description === undefined ? {} : { description });

/** A string, or null when the source does not know it. */
export const NullableText = (description: string) => Nullable(Type.String(), description);

/** Optional string and string-list properties, the bulk of the search and enrichment filters. */
export const OptionalText = (description: string) => Type.Optional(Type.String({ description }));
export const OptionalTexts = (description: string) => Type.Optional(Type.Array(Type.String(), { description }));

/**
 * A search filter's text: no term is longer than this. A 100,000-character name made the full-text
 * query behind the registry's search take 16 s of the event loop; nobody searches by a page of text.
 */
export const SEARCH_TEXT_MAX = 200;
export const SearchText = (description: string) => Type.Optional(Type.String({ maxLength: SEARCH_TEXT_MAX, description }));
export const SearchTexts = (description: string) =>
  Type.Optional(Type.Array(Type.String({ maxLength: SEARCH_TEXT_MAX }), { description }));

/**
 * A record prospecta builds itself: every property it sends is declared, and no other, so a
 * schema that stopped describing the real body fails the response-contract tests. (The
 * interface's "open object" is a promise to clients about future fields, which Versioning
 * rule 3 already makes: backwards-compatible fields may appear without a new version.)
 * A `title` names a record: /openapi.json lists it once under `components.schemas`.
 */
export const ClosedObject = <T extends TProperties>(description: string, properties: T, options: ObjectOptions = {}) =>
  Type.Object(properties, { ...options, additionalProperties: false, description });

/**
 * A JSON object whose other properties are not prospecta's to list: a lead sent by a client, or
 * one echoed back. Typed with an index signature, so its other fields read as `unknown`.
 */
export const OpenObject = <T extends TProperties = Record<never, never>>(
  description: string,
  properties?: T,
  options: ObjectOptions = {},
) =>
  Type.Unsafe<Static<TObject<T>> & Record<string, unknown>>(
    Type.Object(properties ?? ({} as T), { ...options, additionalProperties: true, description }),
  );

/** The answer of a delete. */
export const Deleted = ClosedObject(
  'The resource was deleted.',
  {
    deleted: Type.Boolean({ description: 'Whether the resource was deleted.' }),
  },
  { title: 'Deleted' },
);

export const ErrorBody = ClosedObject(
  'An error: every answer with a status of 400 or more.',
  {
    error: Type.String({ description: 'Machine-readable code, e.g. `unauthorized`, `rate_limited`.' }),
    message: Type.String({ description: 'What went wrong, for people: a 400 names the field.' }),
  },
  { title: 'Error' },
);

/** What one data source added to a search, and why it failed when it did. */
export const SourceCount = ClosedObject(
  'What one source added.',
  {
    source: Type.String({ description: 'The data source.' }),
    count: Type.Integer({ minimum: 0, description: 'Rows this source added (after merging duplicates).' }),
    error: Type.Optional(Type.String({ description: 'Why this source failed or could not answer, when it did.' })),
  },
  { title: 'SourceCount' },
);

/** Credits an operation charged, as the ledger recorded them. */
export const CreditsCharged = Type.Integer({ minimum: 0, description: 'Credits this request charged.' });
