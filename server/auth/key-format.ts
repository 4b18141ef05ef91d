/**
 * API keys are `service_live_` followed by 40 base62 characters (~238 bits). Only a SHA-256 of
 * the whole key is stored: the secret has full entropy, so a slow KDF would add latency to every
 * request without adding protection.
 */
import { hash, randomInt } from 'node:crypto';

export const KEY_PREFIX = 'service_live_';
const SECRET_LENGTH = 40;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{32,128}$`);

export function generateApiKey(): string {
  let secret = '';
  for (let i = 0; i < SECRET_LENGTH; i++) secret += BASE62[randomInt(BASE62.length)];
  return KEY_PREFIX + secret;
}

export function isWellFormedKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** What may be shown of a key after creation: the prefix and its first four secret characters. */
export function keyHint(key: string): string {
  return `${key.slice(0, KEY_PREFIX.length + 4)}…`;
}
