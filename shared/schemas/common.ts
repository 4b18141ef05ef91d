/** Schemas shared by several areas. TypeBox values are JSON Schema and TypeScript types at once. */
import { CloneType, Type, type SchemaOptions, type TProperties } from '@sinclair/typebox';

export const Uuid = Type.String({ format: 'uuid', description: 'A UUID.' });

/** A UUID that says what it identifies, e.g. a path parameter. */
export const IdOf = (description: string) => CloneType(Uuid, { description });

export const Timestamp = Type.String({ format: 'date-time', description: 'An ISO 8601 date and time (UTC).' });

/**
 * A string from a fixed list, as a plain JSON Schema `enum` (TypeBox's unions of literals become
 * `anyOf`, which reads worse in OpenAPI and in validation messages).
 */
export const StringEnum = <const T extends readonly string[]>(values: T, options: SchemaOptions = {}) =>
  Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });

/** Optional string and string-list properties, the bulk of the search and enrichment filters. */
export const OptionalText = (description: string) => Type.Optional(Type.String({ description }));
export const OptionalTexts = (description: string) => Type.Optional(Type.Array(Type.String(), { description }));

/** An open JSON object: the interface allows additional properties. */
export const OpenObject = <T extends TProperties = Record<never, never>>(description: string, properties?: T) =>
  Type.Object(properties ?? ({} as T), { additionalProperties: true, description });

/** The answer of a delete. */
export const Deleted = Type.Object(
  { deleted: Type.Boolean({ description: 'Whether the resource was deleted.' }) },
  { additionalProperties: false },
);

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Machine-readable code, e.g. `unauthorized`, `rate_limited`.' }),
    message: Type.Optional(Type.String({ description: 'Human-readable explanation.' })),
  },
  { additionalProperties: false, $id: 'Error' },
);
