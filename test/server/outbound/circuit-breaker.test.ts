import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../../server/outbound/circuit-breaker.ts';

describe('circuit breaker', () => {
  it('lets one trial call through after the cool-down, and closes on its success', () => {
    let now = 0;
    const breaker = new CircuitBreaker({ threshold: 2, coolDownMs: 1000, now: () => now });
    breaker.failure();
    expect(breaker.allow()).toBe(true);
    breaker.failure();
    expect(breaker.allow()).toBe(false);
    expect(breaker.retryInMs()).toBe(1000);
    now = 1000;
    expect(breaker.allow()).toBe(true); // the trial
    expect(breaker.allow()).toBe(false); // only one
    breaker.success();
    expect(breaker.allow()).toBe(true);
    expect(breaker.retryInMs()).toBe(0);
  });
});
