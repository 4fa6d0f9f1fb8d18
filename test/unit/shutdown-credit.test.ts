/** How long a server that answered shutdown gets to exit by itself (server-process.ts doStop). */
import { describe, expect, it } from 'vitest';
import { shutdownCreditMs } from '../../src/core/yep/server-process.js';

describe('shutdownCreditMs', () => {
  it('is 100 ms on a quiet machine', () => {
    expect(shutdownCreditMs(2000, 0, 2)).toBe(100);
    expect(shutdownCreditMs(2000, 1.5, 2)).toBe(100);
  });
  it('grows with the load per core (a CI run at 24 on 2 cores failed the 100 ms window)', () => {
    expect(shutdownCreditMs(2000, 4, 2)).toBe(200);
    expect(shutdownCreditMs(2000, 12, 4)).toBe(300);
  });
  it('is at most 1 s, and never past the grace', () => {
    expect(shutdownCreditMs(2000, 24, 2)).toBe(1000);
    expect(shutdownCreditMs(250, 24, 2)).toBe(250);
    expect(shutdownCreditMs(50, 0, 2)).toBe(50);
  });
  it('reads the machine when not told', () => {
    const ms = shutdownCreditMs(2000);
    expect(ms).toBeGreaterThanOrEqual(100);
    expect(ms).toBeLessThanOrEqual(1000);
  });
});
