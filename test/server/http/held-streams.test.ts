/** The limits of the streams held for reconnections: per workspace, in bytes, in time after their end. */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HeldStreams } from '../../../server/http/held-streams.ts';
import type { StreamEvent } from '../../../server/invocation/outcome.ts';
import { eventually } from '../../helpers/eventually.ts';

/** A finished stream of one event and its `done`, held by `held`; resolves with its stream id. */
async function finished(held: HeldStreams, workspaceId: string, payload = 'x'): Promise<string> {
  const streamId = randomUUID();
  const events: StreamEvent[] = [{ event: 'done', data: { payload } }];
  const iterator = events[Symbol.iterator]();
  const asyncIterator: AsyncIterator<StreamEvent> = { next: async () => iterator.next() };
  const first = await asyncIterator.next();
  const stream = held.start(workspaceId, 'streamCompanies', streamId, asyncIterator, new AbortController(), first, () => ({ event: 'error', data: {} }));
  const leave = stream.attach();
  await eventually(() => stream.end === 'finished');
  leave();
  return streamId;
}

describe('held streams', () => {
  it('keeps at most perWorkspace streams of a workspace, forgetting the oldest ended one', async () => {
    const held = new HeldStreams({ perWorkspace: 2 });
    const [a, b, c] = [await finished(held, 'ws'), await finished(held, 'ws'), await finished(held, 'ws')];
    expect(held.find('ws', 'streamCompanies', `${a}:1`)).toBeNull();
    expect(held.find('ws', 'streamCompanies', `${b}:1`)).not.toBeNull();
    expect(held.find('ws', 'streamCompanies', `${c}:1`)).not.toBeNull();
    // Another workspace has its own room, and cannot see these.
    await finished(held, 'other');
    expect(held.find('other', 'streamCompanies', `${c}:1`)).toBeNull();
    expect(held.size).toBe(3);
  });

  it('forgets ended streams, oldest first, past maxBytes, and each one keepMs after its end', async () => {
    const held = new HeldStreams({ maxBytes: 300 });
    const first = await finished(held, 'ws', 'a'.repeat(150));
    const second = await finished(held, 'ws', 'b'.repeat(150));
    expect(held.find('ws', 'streamCompanies', `${first}:1`)).toBeNull();
    expect(held.find('ws', 'streamCompanies', `${second}:1`)).not.toBeNull();

    const brief = new HeldStreams({ keepMs: 10 });
    const gone = await finished(brief, 'ws');
    await eventually(() => brief.find('ws', 'streamCompanies', `${gone}:1`) === null, { message: 'the ended stream to be forgotten' });
  });

  it('names a stream by workspace, operation, id and a sequence it has sent', async () => {
    const held = new HeldStreams();
    const id = await finished(held, 'ws');
    expect(held.find('ws', 'streamCompanies', `${id}:1`)).toMatchObject({ after: 1 });
    expect(held.find('ws', 'streamPeople', `${id}:1`)).toBeNull();
    expect(held.find('ws', 'streamCompanies', `${id}:2`)).toBeNull();
    expect(held.find('ws', 'streamCompanies', `${id}:0`)).toBeNull();
    expect(held.find('ws', 'streamCompanies', id)).toBeNull();
  });
});
