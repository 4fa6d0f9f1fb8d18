import { describe, expect, it } from 'vitest';
import { checkCompatibility, parseProtocolVersion } from '../../src/core/yep/version.js';

describe('MAJOR.MINOR compatibility', () => {
  it.each([
    ['1.0', { major: 1, minor: 0 }],
    ['1', { major: 1, minor: 0 }],
    [' 2.13 ', { major: 2, minor: 13 }],
    ['1.0.0', undefined],
    ['v1', undefined],
    ['', undefined],
    ['1.x', undefined],
  ])('parses %j', (text, want) => {
    expect(parseProtocolVersion(text)).toEqual(want);
  });

  it.each([
    ['1.0', true],
    ['1.7', true],
    ['1', true],
    ['2.0', false],
    ['0.9', false],
    ['garbage', false],
  ])('%s against our 1.0 -> compatible=%s', (theirs, ok) => {
    expect(checkCompatibility(theirs).compatible).toBe(ok);
  });

  it('notes a newer minor without refusing it', () => {
    expect(checkCompatibility('1.3', '1.0')).toMatchObject({ compatible: true, note: expect.stringContaining('newer minor') });
  });
});
