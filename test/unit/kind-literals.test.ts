/**
 * "The table is the only place a kind is named" (docs/architecture.md):
 * outside src/core/sources/ (the table, the kinds' modules and the spec parser),
 * no code tests a source kind by its literal (`src.type === 'crate'`,
 * `spec.kind === 'git'`, `case 'path':`); it asks the Source from
 * sources/index.ts (`isLinked`, `pinnedCommit`, `noun`, …). A grep over the
 * source text, so a new literal fails here with the file and line to change.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';

const SRC = join(import.meta.dirname, '..', '..', 'src');
const ROOT = join(SRC, 'core', 'operations');
const SOURCES = join(SRC, 'core', 'sources');
// `kind: 'path'` of doctor's target (core/doctor/target.ts) is not a source kind: a directory to doctor (library API, runDoctor).
const NOT_SOURCE_KINDS = [
  /core\/doctor\/target\.ts:\d+: .*DoctorTarget = |core\/doctor\/target\.ts:\d+: +\| \{ kind: 'path'; dir: string \}|core\/doctor\/target\.ts:\d+: return \{ kind: 'path', dir:/,
];
const KIND = `['"\`](?:crate|git|path)['"\`]`;
// x.kind === 'git', x.type !== 'crate', 'path' == y.kind, case 'git':, kind: 'crate' (a literal record or spec).
const KIND_LITERAL = new RegExp(
  [
    `\\b(?:kind|type)\\s*[!=]==?\\s*${KIND}`,
    `${KIND}\\s*[!=]==?\\s*[\\w.?]*\\b(?:kind|type)\\b`,
    `\\bcase\\s+${KIND}\\s*:`,
    `\\b(?:kind|type)\\s*:\\s*${KIND}`,
  ].join('|'),
);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sourceFiles(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

function kindLiterals(files: string[]): string[] {
  const hits: string[] = [];
  for (const file of files) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (KIND_LITERAL.test(line) && !/^\s*(?:\*|\/\/)/.test(line)) hits.push(`${file}:${i + 1}: ${line.trim()}`);
      });
  }
  return hits;
}

describe('source kinds are named only in the table', () => {
  test('the pattern catches each spelling (so the check below can fail)', () => {
    for (const line of [
      `if (src.type === 'crate') {`,
      `spec.kind !== "git"`,
      `case 'path':`,
      `'git' === entry.source.type`,
      `{ type: 'git', url }`,
      'x.kind == `crate`',
    ]) {
      expect(KIND_LITERAL.test(line), line).toBe(true);
    }
    for (const line of [`command.where === 'path'`, `const reports = { crates, git: gits }`, `section: 'crates'`, `spec.kind === 'invalid'`]) {
      expect(KIND_LITERAL.test(line), line).toBe(false);
    }
  });

  test('src/core/operations compares no kind literal', () => {
    const files = sourceFiles(ROOT);
    expect(files.length).toBeGreaterThan(10);
    expect(kindLiterals(files)).toEqual([]);
  });

  test('nothing in src outside src/core/sources names a kind (renderers, binary, policy, commands)', () => {
    const files = sourceFiles(SRC).filter((f) => !f.startsWith(SOURCES));
    expect(files.length).toBeGreaterThan(100);
    expect(kindLiterals(files).filter((hit) => !NOT_SOURCE_KINDS.some((re) => re.test(hit)))).toEqual([]);
  });
});
