/**
 * Cargo's requirement grammar exactly. Every row of
 * test/fixtures/cargo-semver/table.json is the verdict of cargo's own `semver`
 * crate (VersionReq::parse and ::matches, Version::parse; see
 * scripts/cargo-semver-oracle/README.md): each requirement must be accepted
 * exactly when cargo accepts it and must then match exactly the versions cargo
 * matches; each version must parse exactly when cargo parses it. One table test
 * per rule. yep-ext reads a lone full version as exact (`cargo install
 * --version`): such rows are compared with cargo's verdict on their `=` form.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCargoRequirement, parseCargoVersion, satisfiesRequirement, type CargoRequirement } from '../../src/core/sources/crates-io/cargo-version.js';
import { pickVersions } from '../../src/core/sources/crates-io/pick-version.js';
import { parseIndexFile } from '../../src/core/sources/crates-io/index-lines.js';
import { REPO_ROOT } from '../helpers/home.js';

interface ReqRow {
  rule: string;
  req: string;
  ok: boolean;
  error?: string;
  matches?: string[];
}
interface VersionRow {
  rule: string;
  version: string;
  ok: boolean;
  error?: string;
}
const table = JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'cargo-semver', 'table.json'), 'utf8')) as {
  pool: string[];
  requirements: ReqRow[];
  versions: VersionRow[];
};
const byReq = new Map(table.requirements.map((r) => [r.req, r]));
const pool = table.pool.map((v) => {
  const parsed = parseCargoVersion(v);
  if (!parsed) throw new Error(`pool version ${v} does not parse`);
  return parsed;
});

function tryParse(req: string): CargoRequirement | Error {
  try {
    return parseCargoRequirement(req);
  } catch (e) {
    return e as Error;
  }
}

/** The row cargo's verdict is read from: the `=` form for what yep-ext reads as exact. */
function expectedRow(row: ReqRow, parsed: CargoRequirement | Error): ReqRow {
  const text = row.req.replace(/^ +/, '');
  if (parsed instanceof Error || parsed.exact === undefined || text.startsWith('=')) return row;
  const eq = byReq.get(`=${text}`);
  if (!eq) throw new Error(`table has no "=" row for ${JSON.stringify(row.req)}`);
  return eq;
}

const rules = [...new Set(table.requirements.map((r) => r.rule))];

describe.each(rules)('requirements, rule %s (cargo semver 1.0.14 verdicts)', (rule) => {
  it.each(table.requirements.filter((r) => r.rule === rule).map((r) => [JSON.stringify(r.req), r] as const))('%s', (_label, row) => {
    const parsed = tryParse(row.req);
    const want = expectedRow(row, parsed);
    if (!want.ok) {
      expect(parsed, `cargo refuses it (${want.error})`).toBeInstanceOf(Error);
      expect((parsed as { code?: string }).code).toBe('E_USAGE');
      expect((parsed as Error).message).toMatch(/^Invalid version requirement /);
      return;
    }
    expect(parsed, `cargo accepts it`).not.toBeInstanceOf(Error);
    const got = table.pool.filter((_, i) => satisfiesRequirement(pool[i]!, parsed as CargoRequirement));
    expect(got).toEqual(want.matches);
  });
});

describe('versions (index `vers`), as Version::parse reads them', () => {
  it.each(table.versions.map((v) => [JSON.stringify(v.version), v] as const))('%s', (_label, row) => {
    expect(parseCargoVersion(row.version) !== undefined, row.error ?? 'valid').toBe(row.ok);
  });
});

describe('the table covers each rule of the requirement grammar', () => {
  it.each([
    ['whitespace other than U+0020', ['1.2\t', '1.2\u00a0', '1.2\ufeff', '1.2\u3000', '\t1.2']],
    ['a wildcard beside other comparators', ['>1, x', '*, <2']],
    ['a wildcard major followed by more parts', ['*.*', 'X.X.X']],
    ['an operator before a wildcard major', ['>=*', '^*', '~*', '<*']],
    ['build metadata on a partial version', ['1.0+build.5', '1.2.*+b']],
  ])('%s: refused by cargo and by us', (_rule, reqs) => {
    for (const req of reqs) {
      expect(byReq.get(req)?.ok, req).toBe(false);
      expect(tryParse(req), req).toBeInstanceOf(Error);
    }
  });

  it('numbers above 2^53 that are valid u64 resolve (BigInt, not npm semver)', () => {
    expect(byReq.get('>=0.0.0, <9007199254740993')?.ok).toBe(true);
    const lines = ['1.0.0', '9007199254740992.0.0', '9007199254740993.0.0', '18446744073709551615.0.0']
      .map((vers) => JSON.stringify({ name: 'yolop-extension-big', vers, deps: [], cksum: 'a'.repeat(64), features: {}, yanked: false }))
      .join('\n');
    const { entries } = parseIndexFile(`${lines}\n`, 'yolop-extension-big', 'test');
    expect(entries.map((e) => e.vers)).toEqual(['1.0.0', '9007199254740992.0.0', '9007199254740993.0.0', '18446744073709551615.0.0']);
    expect(pickVersions({ crate: 'yolop-extension-big', entries, requirement: '>=0.0.0, <9007199254740993', now: 0 }).candidates[0]?.vers).toBe(
      '9007199254740992.0.0',
    );
    expect(pickVersions({ crate: 'yolop-extension-big', entries, now: 0 }).candidates[0]?.vers).toBe('18446744073709551615.0.0');
    expect(pickVersions({ crate: 'yolop-extension-big', entries, requirement: '=9007199254740993', now: 0 }).candidates[0]?.vers).toBe('9007199254740993.0.0');
  });

  it('words the refusals for people', () => {
    expect(() => parseCargoRequirement('^1.2\t')).toThrow(/contains U\+0009 \(only plain spaces, U\+0020/);
    expect(() => parseCargoRequirement('1.2\u00a0')).toThrow(/contains U\+00A0/);
    expect(() => parseCargoRequirement('>1, x')).toThrow(/"x" must be the only comparator/);
    expect(() => parseCargoRequirement('*.*')).toThrow(/a wildcard major version cannot be followed by more parts/);
    expect(() => parseCargoRequirement('>=*')).toThrow(/an operator cannot apply to a wildcard major version/);
    expect(() => parseCargoRequirement('1.0+build.5')).toThrow(/build metadata needs a full version/);
    expect(() => parseCargoRequirement('18446744073709551616')).toThrow(/larger than cargo allows/);
    expect(() => parseCargoRequirement(Array(33).fill('>=1').join(', '))).toThrow(/more than 32 comparators/);
  });
});
