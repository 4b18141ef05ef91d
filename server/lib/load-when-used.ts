/**
 * A package loaded the first time it is used rather than when the process starts. Loading a
 * module costs its whole dependency tree at start-up (the MongoDB driver, ioredis, linkedom and
 * the OpenAI SDK came to about a second of a server's start), so what only some configurations or
 * some requests need waits until then. Synchronous (`require`), for callers that are.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export function loadWhenUsed<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(name) as T);
}
