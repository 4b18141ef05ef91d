import { describe, expect, it } from 'vitest';
import { TurnBatchedDestination } from '../../server/log-destination.ts';

function sink() {
  const writes: string[] = [];
  let flushed = 0;
  return { writes, flushes: () => flushed, write: (data: string) => writes.push(data), flushSync: () => void flushed++ };
}

describe('TurnBatchedDestination', () => {
  it('hands the lines of one event-loop turn to the sink as one write, in order', async () => {
    const out = sink();
    const destination = new TurnBatchedDestination(out);
    destination.write('a\n');
    destination.write('b\n');
    expect(out.writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(out.writes).toEqual(['a\nb\n']);
    destination.write('c\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(out.writes).toEqual(['a\nb\n', 'c\n']);
  });

  it('flushSync writes what is pending at once, then flushes the sink', () => {
    const out = sink();
    const destination = new TurnBatchedDestination(out);
    destination.write('last words\n');
    destination.flushSync();
    expect(out.writes).toEqual(['last words\n']);
    expect(out.flushes()).toBe(1);
  });
});
