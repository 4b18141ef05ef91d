/**
 * The random secrets of the dashboard (sign-in links, session cookies, sign-in states): 256 bits,
 * base64url. Only their SHA-256 is stored, so a copy of the store signs no one in.
 */
import { createHash, randomBytes } from 'node:crypto';

export function newSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The stored form of a token; anything that is not a token hashes to an id nothing has. */
export function tokenId(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

const WELL_FORMED = /^[A-Za-z0-9_-]{43}$/;

/** Whether `value` could be a token at all, so garbage costs no store lookup. */
export function isWellFormedToken(value: unknown): value is string {
  return typeof value === 'string' && WELL_FORMED.test(value);
}
