/** At most this many characters in an API key's name: the schema's bound and the dashboard field's. */
export const MAX_KEY_NAME = 100;
