/** Release-age durations (docs/policy.md): the four units, strict refusals, short ages. */
import { describe, expect, it } from 'vitest';
import { durationMs, formatAge, parseDuration } from '../../src/core/text/duration.js';

describe('durations', () => {
  it('reads 90m, 36h, 3d, 1w', () => {
    expect(durationMs('90m')).toBe(90 * 60_000);
    expect(durationMs('36h')).toBe(36 * 3_600_000);
    expect(durationMs('3d')).toBe(3 * 86_400_000);
    expect(durationMs('1w')).toBe(7 * 86_400_000);
    expect(durationMs('0d')).toBe(0);
  });
  it.each(['', '3', 'd', '3 days', '1.5h', '-1d', '3dd', '1y', '9999999d'])('refuses %j', (text) => {
    expect(durationMs(text)).toBeUndefined();
    expect(() => parseDuration(text, '--min-age')).toThrow(/not a duration/);
  });
  it('formats ages short', () => {
    expect(formatAge(45 * 60_000)).toBe('45 min');
    expect(formatAge(2 * 3_600_000 + 5)).toBe('2 h');
    expect(formatAge(3 * 86_400_000)).toBe('3 d');
    expect(formatAge(14 * 86_400_000)).toBe('2 w');
  });
});
