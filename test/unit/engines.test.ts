/** The pure halves of the engines check: the verdict table and `--version` parsing. */
import { describe, expect, it } from 'vitest';
import { checkEngines, enginesRequirement, type AgentVersion } from '../../src/core/agent/engines.js';
import { parseAgentVersion } from '../../src/core/agent/version-probe.js';

const agent = (version: string): AgentVersion => ({ known: true, version, path: '/usr/bin/yolop' });
const unknown: AgentVersion = { known: false, reason: 'no yolop on PATH' };

describe('checkEngines', () => {
  it.each([
    [{ yolop: '>=0.11' }, '0.12.1', 'admits'],
    [{ yolop: '>=0.13' }, '0.12.1', 'excludes'],
    [{ yolop: '^0.12.0' }, '0.12.1', 'admits'],
    [{ yolop: '^0.12.0' }, '0.13.0', 'excludes'],
    [{ yolop: '~0.12' }, '0.12.9', 'admits'],
    [{ yolop: '>=0.10 <0.12 || >=0.13' }, '0.12.1', 'excludes'],
    [{ yolop: '>=0.10 <0.12 || >=0.13' }, '0.13.0', 'admits'],
    [{ yolop: '0.10 - 0.12' }, '0.12.5', 'admits'],
    [{ yolop: '*' }, '0.1.0', 'admits'],
    [{ yolop: '' }, '0.1.0', 'admits'],
    // A development build counts as the version it leads to (npm checks engines with includePrerelease).
    [{ yolop: '>=0.13' }, '0.14.0-dev.3', 'admits'],
    [{ yolop: '>=0.13' }, '0.13.0-rc.1', 'admits'],
    [{ yolop: '>=0.13' }, '0.12.9-rc.1', 'excludes'],
    [{ yolop: 'not a range' }, '0.12.1', 'malformed'],
    [{ yolop: 13 }, '0.12.1', 'malformed'],
    [{ yolop: ['>=1'] }, '0.12.1', 'malformed'],
    ['>=0.12', '0.12.1', 'malformed'],
    [['yolop'], '0.12.1', 'malformed'],
    [{ node: '>=20' }, '0.12.1', 'none'],
    [{ yolop: null }, '0.12.1', 'none'],
    [undefined, '0.12.1', 'none'],
    [null, '0.12.1', 'none'],
  ])('engines %j with agent %s: %s', (engines, version, status) => {
    expect(checkEngines({ engines }, agent(version)).status).toBe(status);
  });

  it('says what is needed and what is there', () => {
    expect(checkEngines({ engines: { yolop: '>=0.13' } }, agent('0.12.1'))).toEqual({
      status: 'excludes',
      requires: '>=0.13',
      agent: '0.12.1',
      detail: 'needs yolop >=0.13; you have 0.12.1',
    });
    expect(checkEngines({ engines: { yolop: '>=0.13' } }, unknown)).toEqual({
      status: 'unknown-agent',
      requires: '>=0.13',
      agent: null,
      detail: "needs yolop >=0.13; the installed yolop's version is unknown (no yolop on PATH)",
    });
    expect(checkEngines({ engines: { yolop: 7 } }, unknown)).toMatchObject({
      status: 'malformed',
      requires: '7',
      detail: '"engines.yolop" is 7, not a string (ignored)',
    });
  });

  it('an unknown agent never excludes, and package text is neutralised in the detail', () => {
    const v = checkEngines({ engines: { yolop: '>=1 \u001b[2J' } }, unknown);
    expect(v.status).not.toBe('excludes');
    expect(v.detail).not.toContain('\u001b');
  });

  it('enginesRequirement ignores everything but engines.yolop', () => {
    expect(enginesRequirement({ node: '>=20', npm: 'x' })).toEqual({ declared: false });
    expect(enginesRequirement({ yolop: '>=0.6' })).toEqual({ declared: true, range: '>=0.6' });
    expect(enginesRequirement(Object.create({ yolop: '>=1' }))).toEqual({ declared: false });
    // semver refuses ranges over 256 characters.
    expect(enginesRequirement({ yolop: `>=${'9'.repeat(300)}` })).toMatchObject({
      declared: true,
      malformed: expect.stringContaining('is not a version range'),
    });
  });

  it('parseAgentVersion: long output without a version', () => {
    expect(parseAgentVersion('x'.repeat(5000))).toBeUndefined();
  });
});

describe('parseAgentVersion', () => {
  it.each([
    ['yolop 0.12.1\n', '0.12.1'],
    ['0.12.1', '0.12.1'],
    ['yolop v0.13.0', '0.13.0'],
    ['yolop-cli 0.13.0-dev.2 (abc1234 2026-11-30)\n', '0.13.0-dev.2'],
    ['yolop 1.2.3+build.7', '1.2.3'],
    ['\u001b[1myolop\u001b[0m \u001b[32m0.12.1\u001b[0m', '0.12.1'],
    ['yolop\nversion: 0.12.1\n', '0.12.1'],
    ['yolop (development build)', undefined],
    ['yolop 0.12', undefined],
    ['', undefined],
    ['yolop 01.2.3', undefined],
  ])('%j -> %s', (text, version) => {
    expect(parseAgentVersion(text)).toBe(version);
  });
});
