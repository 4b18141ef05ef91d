/** The per-request budget: the balance capped by `maxCredits`, and when a short balance is a 402. */
import { describe, expect, it } from 'vitest';
import { Budget } from '../../../server/invocation/budget.ts';

describe('Budget', () => {
  it('spends the balance, capped by the caller', () => {
    expect(new Budget(500).credits).toBe(500);
    expect(new Budget(500, 3).credits).toBe(3);
    expect(new Budget(2, 10).credits).toBe(2);
  });

  it('refuses with 402 when the balance, not the caller, stops a purchase', () => {
    expect(() => new Budget(0).requireBalanceFor(1, 'a lead enriched')).toThrow(
      expect.objectContaining({ code: 'insufficient_credits', message: 'The balance is 0 credits; a lead enriched costs 1 credit.' }),
    );
    expect(() => new Budget(1, 5).requireBalanceFor(2, 'a lead')).toThrow(expect.objectContaining({ code: 'insufficient_credits' }));
    // The caller asked for less than the price: it gets an answer without the paid part.
    expect(() => new Budget(0, 0).requireBalanceFor(1, 'a lead')).not.toThrow();
    expect(() => new Budget(500, 1).requireBalanceFor(2, 'a lead')).not.toThrow();
    expect(() => new Budget(2).requireBalanceFor(2, 'a lead')).not.toThrow();
  });
});
