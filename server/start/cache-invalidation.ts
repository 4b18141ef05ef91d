/**
 * Cache entries dropped in every instance that shares Redis, before the change that made them
 * stale answers: a revoked key, a member added or removed.
 *
 * Redis passes a PUBLISH to the subscribers' sockets before it replies, but an instance can still
 * serve a request before it reads its socket. So each instance acknowledges on a reply channel
 * once it has dropped the entry, and the announcing one waits for as many acknowledgements as
 * PUBLISH counted subscribers (itself among them). It waits ACK_DEADLINE_MS at most: an instance
 * that died in between took its cache with it. When Redis is away the change answers all the
 * same, and the others' caches lapse after KEY_CACHE_SECONDS.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

const ACKS_CHANNEL = 'prospecta:cache:dropped';
const ACK_DEADLINE_MS = 2_000;

/** What a channel's message is dropped from, in this instance. */
export type Forget = (message: string) => void;

/**
 * Subscribes to each channel; returns, per channel, the announcement that resolves once every
 * instance has run that channel's `forget` on the message.
 */
export async function cacheInvalidation<C extends string>(
  redis: Redis,
  subscriber: Redis,
  forgets: Record<C, Forget>,
): Promise<Record<C, (message: string) => Promise<void>>> {
  /** Per announcement: acknowledgements so far, and how many PUBLISH counted once it replied. */
  const waiting = new Map<string, { acks: number; needed?: number; check: () => void }>();
  subscriber.on('message', (channel: string, message: string) => {
    if (channel === ACKS_CHANNEL) {
      const wait = waiting.get(message);
      if (wait) {
        wait.acks++;
        wait.check();
      }
      return;
    }
    const forget = (forgets as Record<string, Forget | undefined>)[channel];
    const space = message.indexOf(' ');
    if (!forget || space < 0) return;
    forget(message.slice(space + 1));
    redis.publish(ACKS_CHANNEL, message.slice(0, space)).catch(() => {});
  });
  await subscriber.subscribe(ACKS_CHANNEL, ...Object.keys(forgets));

  const announce = (channel: string) => async (message: string) => {
    const id = randomUUID();
    let allDropped!: () => void;
    const dropped = new Promise<void>((resolve) => (allDropped = resolve));
    const wait: { acks: number; needed?: number; check: () => void } = {
      acks: 0,
      check: () => wait.needed !== undefined && wait.acks >= wait.needed && allDropped(),
    };
    waiting.set(id, wait); // before publishing: an acknowledgement can come back before the reply
    const deadline = setTimeout(allDropped, ACK_DEADLINE_MS);
    try {
      wait.needed = await redis.publish(channel, `${id} ${message}`);
      wait.check();
      await dropped;
    } catch {
      // Redis is away: nobody can be told now (see the header).
    } finally {
      clearTimeout(deadline);
      waiting.delete(id);
    }
  };
  return Object.fromEntries(Object.keys(forgets).map((channel) => [channel, announce(channel)])) as Record<C, (message: string) => Promise<void>>;
}
