import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BatchedDestination } from '../../../server/lib/log-destination.ts';

function sink() {
  const writes: string[] = [];
  let flushed = 0;
  return { writes, flushes: () => flushed, write: (data: string) => writes.push(data), flushSync: () => void flushed++ };
}

describe('BatchedDestination', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('hands the lines of its delay to the sink as one write, in order', () => {
    const out = sink();
    const destination = new BatchedDestination(out, 10);
    destination.write('a\n');
    vi.advanceTimersByTime(5);
    destination.write('b\n');
    expect(out.writes).toEqual([]);
    vi.advanceTimersByTime(5);
    expect(out.writes).toEqual(['a\nb\n']);
    destination.write('c\n');
    vi.advanceTimersByTime(9);
    expect(out.writes).toEqual(['a\nb\n']);
    vi.advanceTimersByTime(1);
    expect(out.writes).toEqual(['a\nb\n', 'c\n']);
  });

  it('writes at once when 64 KiB are waiting, without waiting for the timer', () => {
    const out = sink();
    const destination = new BatchedDestination(out, 10);
    const line = `${'x'.repeat(1023)}\n`;
    for (let i = 0; i < 63; i++) destination.write(line);
    expect(out.writes).toEqual([]);
    destination.write(line);
    expect(out.writes).toEqual([line.repeat(64)]);
    // The timer of the drained lines is gone with them.
    vi.advanceTimersByTime(10);
    expect(out.writes).toHaveLength(1);
  });

  it('flushSync writes what is pending at once, then flushes the sink', () => {
    const out = sink();
    const destination = new BatchedDestination(out, 10);
    destination.write('last words\n');
    destination.flushSync();
    expect(out.writes).toEqual(['last words\n']);
    expect(out.flushes()).toBe(1);
  });
});
