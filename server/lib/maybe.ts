/** A field a third party's answer may leave out or send as null. */
export type Maybe<T> = T | null | undefined;
