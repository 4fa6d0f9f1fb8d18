/** Release-age durations (docs/policy.md): the four units, strict refusals, short ages. */
import { describe, expect, it } from 'vitest';
import { durationMs, formatAge, formatTimeout, parseDuration, parseTimeout } from '../../src/core/text/duration.js';

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

describe('--timeout values', () => {
  it.each([
    ['30s', 30_000],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['500ms', 500],
    ['90', 90_000],
    ['1.5s', 1_500],
    [' 2M ', 120_000],
    ['24h', 86_400_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseTimeout(text)).toBe(ms);
  });
  it.each(['', 'abc', '0', '0s', '-5s', '25h', '2 minutes', '1d', '5m30s', 'Infinity', 'NaN', '1e3'])('%j is a usage error', (text) => {
    expect(() => parseTimeout(text)).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
  });
  it.each([
    [500, '500ms'],
    [2_500, '2.5s'],
    [45_000, '45s'],
    [120_000, '2m'],
    [90_000, '1m 30s'],
    [3_600_000, '1h'],
    [5_400_000, '1h 30m'],
  ])('%d ms is said as %s', (ms, text) => {
    expect(formatTimeout(ms)).toBe(text);
  });
});
