/**
 * The one crate-version picker, as a table: the same index lines, requirement,
 * cooldown and installed version give install, update, outdated and info one
 * answer (what is taken, best first; what is newer; the newest release outside the
 * requirement; what the cooldown kept out). Pure: no registry, no clock.
 */
import { describe, expect, it } from 'vitest';
import type { Cooldown } from '../../src/core/sources/crates-io/cooldown-options.js';
import { parseIndexFile } from '../../src/core/sources/crates-io/index-lines.js';
import { pickVersions, requirementSelects, type PickRequest } from '../../src/core/sources/crates-io/pick-version.js';
import { parseCargoRequirement, parseCargoVersion } from '../../src/core/sources/crates-io/cargo-version.js';
import { pubtimeAgo } from '../helpers/registry.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');
const HOUR = 3_600_000;
const CK = 'c'.repeat(64);

/** One index line: `0.2.0`, `0.2.0!` (yanked), `0.2.0~` (no valid cksum), `0.2.0@2` (published 2 h ago). */
function line(spec: string): string {
  const m = /^([^!~@]+)(!)?(~)?(?:@(\d+))?$/.exec(spec)!;
  const pubtime = m[4] !== undefined ? pubtimeAgo(Number(m[4]) * HOUR, NOW) : undefined;
  return JSON.stringify({ name: 'x', vers: m[1], deps: [], cksum: m[3] ? 'nope' : CK, features: {}, yanked: m[2] === '!', ...(pubtime ? { pubtime } : {}) });
}
const entries = (...specs: string[]) => parseIndexFile(`${specs.map(line).join('\n')}\n`, 'x', 'test').entries;

const user = (hours: number, allowFresh = false): Cooldown => ({ userMs: hours * HOUR, userFrom: '--min-age', policyMs: 0, allowFresh });
const policy = (hours: number): Cooldown => ({ userMs: 0, userFrom: 'YEP_EXT_MIN_AGE', policyMs: hours * HOUR, policyFile: '/etc/p.toml', allowFresh: true });

interface Row {
  what: string;
  index: string[];
  requirement?: string;
  cooldown?: Cooldown;
  installed?: string;
  /** candidates (vers, best first), newer ("v" within, "v*" outside), outside, skip note (regex) */
  take: string[];
  newer?: string[];
  outside?: string;
  skip?: RegExp;
}

const rows: Row[] = [
  // install: the requirement, yanked, pre-release, cksum
  { what: 'newest stable', index: ['0.1.0', '0.2.0', '0.3.0-rc.1', '0.2.1!'], take: ['0.2.0', '0.1.0'] },
  { what: 'a requirement', index: ['0.1.0', '0.1.5', '0.2.0'], requirement: '^0.1', take: ['0.1.5', '0.1.0'] },
  {
    what: 'a pre-release only when named',
    index: ['1.0.0-beta.1', '1.0.0-beta.2', '0.9.0'],
    requirement: '^1.0.0-beta',
    take: ['1.0.0-beta.2', '1.0.0-beta.1'],
  },
  { what: 'an unverifiable newest is passed over', index: ['1.0.0', '1.1.0~'], take: ['1.0.0'] },
  { what: 'an exactly named yanked version', index: ['1.0.0', '1.0.1!'], requirement: '=1.0.1', take: ['1.0.1'] },
  // install: the cooldown
  {
    what: 'a young newest is skipped',
    index: ['0.3.0@240', '0.4.1@1'],
    cooldown: user(72),
    take: ['0.3.0'],
    skip: /skipped x 0\.4\.1 is 1 h old; cooldown 3 d \(--min-age\); using 0\.3\.0/,
  },
  { what: 'the policy floor names its file', index: ['0.3.0@240', '0.4.1@1'], cooldown: policy(24), take: ['0.3.0'], skip: /policy min_age in \/etc\/p\.toml/ },
  { what: 'a young backport is out too', index: ['0.3.0@240', '0.3.1@1', '0.4.0@200'], cooldown: user(72), take: ['0.4.0', '0.3.0'] },
  { what: 'no pubtime counts as old', index: ['0.3.0@240', '0.5.0'], cooldown: user(72), take: ['0.5.0', '0.3.0'] },
  { what: 'an exact young version with --allow-fresh', index: ['0.4.1@1'], requirement: '0.4.1', cooldown: user(72, true), take: ['0.4.1'] },
  // installed (update, outdated, info): newer only, never a downgrade, one outside rule
  {
    what: 'within and outside',
    index: ['0.1.0', '0.1.5', '0.2.0', '0.3.0'],
    requirement: '^0.1',
    installed: '0.1.0',
    take: ['0.1.5'],
    newer: ['0.3.0*', '0.2.0*', '0.1.5'],
    outside: '0.3.0',
  },
  { what: 'up to date, newer outside', index: ['0.1.0', '0.2.0'], requirement: '^0.1', installed: '0.1.0', take: [], newer: ['0.2.0*'], outside: '0.2.0' },
  { what: 'no requirement: nothing is outside', index: ['0.1.0', '0.2.0', '1.0.0'], installed: '0.2.0', take: ['1.0.0'], newer: ['1.0.0'] },
  {
    what: 'outside: no yanked, no pre-release, no unverifiable',
    index: ['0.1.0', '0.2.0!', '0.3.0-rc.1', '0.4.0~'],
    requirement: '^0.1',
    installed: '0.1.0',
    take: [],
    newer: [],
  },
  {
    what: 'outside under the cooldown',
    index: ['0.1.0@500', '0.2.0@1', '0.3.0@300'],
    requirement: '^0.1',
    installed: '0.1.0',
    cooldown: user(72),
    take: [],
    newer: ['0.3.0*'],
    outside: '0.3.0',
  },
  {
    what: 'within under the cooldown: keeping',
    index: ['0.1.0@500', '0.1.1@1'],
    requirement: '^0.1',
    installed: '0.1.0',
    cooldown: user(72),
    take: [],
    newer: [],
    skip: /skipped x 0\.1\.1 is 1 h old; cooldown 3 d \(--min-age\); keeping 0\.1\.0/,
  },
  { what: 'an installed young version is no refusal', index: ['0.4.1@1'], requirement: '^0.4', installed: '0.4.1', cooldown: user(72), take: [], newer: [] },
  { what: 'an exact pin is not re-judged', index: ['0.4.1@1', '0.5.0@1'], requirement: '=0.4.1', installed: '0.4.1', cooldown: user(72), take: [], newer: [] },
  { what: 'a yanked newer never downgrades', index: ['0.1.0', '0.1.5!'], requirement: '^0.1', installed: '0.1.5', take: [], newer: [] },
  { what: 'everything yanked: nothing to move to, no error', index: ['0.1.0!'], requirement: '^0.1', installed: '0.1.0', take: [], newer: [] },
];

describe('pickVersions: one table for install, update, outdated and info', () => {
  it.each(rows)('$what', (row) => {
    const request: PickRequest = {
      crate: 'x',
      entries: entries(...row.index),
      requirement: row.requirement,
      cooldown: row.cooldown,
      now: NOW,
      installed: row.installed !== undefined ? { version: row.installed } : undefined,
    };
    const pick = pickVersions(request);
    expect(pick.candidates.map((e) => e.vers)).toEqual(row.take);
    if (row.newer) expect(pick.newer.map((n) => n.entry.vers + (n.within ? '' : '*'))).toEqual(row.newer);
    expect(pick.outside?.vers).toBe(row.outside);
    if (row.skip) expect(pick.skipNote).toMatch(row.skip);
    else expect(pick.skipNote).toBeUndefined();
    // The newer versions `update` reaches are exactly its candidates: outdated's walk and update's walk read one list.
    if (row.installed !== undefined) expect(pick.newer.filter((n) => n.within).map((n) => n.entry)).toEqual(pick.candidates);
  });

  it('the same version under another cksum comes first, so update refuses the republish', () => {
    const pick = pickVersions({ crate: 'x', entries: entries('0.1.0'), requirement: '^0.1', now: NOW, installed: { version: '0.1.0', cksum: 'd'.repeat(64) } });
    expect(pick.candidates.map((e) => e.vers)).toEqual(['0.1.0']);
    expect(
      pickVersions({ crate: 'x', entries: entries('0.1.0'), requirement: '^0.1', now: NOW, installed: { version: '0.1.0', cksum: CK } }).candidates,
    ).toEqual([]);
  });

  it('install refuses: a young exact version (exit 13), the policy floor even with --allow-fresh, every match young', () => {
    const refuse = (r: Partial<PickRequest>) => {
      try {
        pickVersions({ crate: 'x', entries: entries('0.3.0@240', '0.4.1@1'), now: NOW, ...r });
      } catch (e) {
        return e as { code: string; message: string; details: Record<string, unknown> };
      }
      throw new Error('no refusal');
    };
    expect(refuse({ requirement: '0.4.1', cooldown: user(72) })).toMatchObject({
      code: 'E_POLICY',
      details: { rule: 'min_age', item: 'x@0.4.1', from: '--min-age' },
    });
    expect(refuse({ requirement: '0.4.1', cooldown: policy(72) }).message).toMatch(/cooldown 3 d \(policy min_age in \/etc\/p\.toml\)/);
    expect(refuse({ requirement: '^0.4', cooldown: user(168) }).message).toMatch(/younger than the cooldown: 0\.4\.1 is 1 h old; cooldown 7 d/);
    // Installed, the same states are "nothing to move to", never an error.
    expect(
      pickVersions({ crate: 'x', entries: entries('0.4.1@1'), requirement: '^0.4', cooldown: policy(72), now: NOW, installed: { version: '0.4.0' } })
        .candidates,
    ).toEqual([]);
  });

  it('warnings are said only for a version taken', () => {
    const skipped = pickVersions({ crate: 'x', entries: entries('1.0.0', '1.1.0~'), now: NOW });
    expect(skipped.warnings.join()).toMatch(/skipped x 1\.1\.0: the index gives no valid checksum; using 1\.0\.0/);
    expect(pickVersions({ crate: 'x', entries: entries('1.0.0', '1.1.0~'), now: NOW, installed: { version: '1.0.0' } }).warnings).toEqual([]);
  });

  it('requirementSelects is the one "within" rule (no requirement: releases only)', () => {
    const v = (s: string) => parseCargoVersion(s)!;
    expect(requirementSelects(undefined, v('1.0.0'))).toBe(true);
    expect(requirementSelects(undefined, v('1.0.0-rc.1'))).toBe(false);
    expect(requirementSelects(parseCargoRequirement('^0.1'), v('0.1.9'))).toBe(true);
    expect(requirementSelects(parseCargoRequirement('^0.1'), v('0.2.0'))).toBe(false);
  });
});
