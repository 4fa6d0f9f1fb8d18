#!/usr/bin/env node
/**
 * Regenerate test/fixtures/cargo-semver/table.json: every requirement and version
 * string below, judged by cargo's own `semver` crate (the oracle in this folder).
 * See README.md here for how to build the oracle; then:
 *
 *   node scripts/cargo-semver-oracle/gen-table.mjs /path/to/cargo-semver-oracle
 *
 * Each requirement row: {rule, req, ok, error?, matches?: versions of POOL it matches}.
 * Each version row: {rule, version, ok, error?}. Strings go to the oracle hex-encoded
 * so tabs, no-break spaces and BOMs arrive exactly as written.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT = join(ROOT, 'test', 'fixtures', 'cargo-semver', 'table.json');
const oracle = process.argv[2];
if (!oracle) {
  console.error('usage: gen-table.mjs <path to the built cargo-semver-oracle binary>');
  process.exit(2);
}

/** Versions every valid requirement is matched against. */
const POOL = [
  '0.0.0',
  '0.0.1',
  '0.0.3',
  '0.0.4',
  '0.1.0',
  '0.3.0',
  '0.3.7',
  '0.4.0',
  '0.9.0',
  '0.11.0+wasi',
  '1.0.0-alpha',
  '1.0.0-alpha.1',
  '1.0.0-alpha.beta',
  '1.0.0-beta',
  '1.0.0-beta.2',
  '1.0.0-beta.11',
  '1.0.0-rc.1',
  '1.0.0',
  '1.0.1-alpha',
  '1.0.1',
  '1.1.0-beta',
  '1.1.0',
  '1.2.0',
  '1.2.2',
  '1.2.3-beta.1',
  '1.2.3-beta.2',
  '1.2.3-beta.10',
  '1.2.3',
  '1.2.3+build.5',
  '1.2.4',
  '1.2.9',
  '1.3.0',
  '1.4.0',
  '1.5.0-beta',
  '1.5.0',
  '1.9.9',
  '1.99.0',
  '2.0.0-rc.1',
  '2.0.0',
  '2.1.0',
  '9.0.0',
  '9007199254740991.0.0',
  '9007199254740992.0.0',
  '9007199254740993.0.0',
  '18446744073709551615.0.0',
  '0.0.9007199254740993',
  '1.18446744073709551615.0',
  '1.2.18446744073709551615',
];

const WS = {
  tab: '\t',
  lf: '\n',
  cr: '\r',
  vt: '\v',
  ff: '\f',
  nbsp: '\u00a0',
  bom: '\ufeff',
  ideographic: '\u3000',
  'en space': '\u2002',
  'thin space': '\u2009',
  'zero-width space': '\u200b',
  nel: '\u0085',
  'line separator': '\u2028',
  ogham: '\u1680',
};

/** [rule, requirement] */
const REQS = [];
const add = (rule, ...reqs) => {
  for (const r of reqs) REQS.push([rule, r]);
};

add(
  'basic',
  '1.2.3',
  '=1.2.3',
  '1.2',
  '1',
  '0.3',
  '^1.2.3',
  '^0.3',
  '^0.0.3',
  '^0',
  '^0.0',
  '^1',
  '^1.2',
  '~1.2.3',
  '~1.2',
  '~1',
  '~0',
  '~0.0.3',
  '>=1.2, <2',
  '>=1.2,<2',
  '>= 1.2, < 2',
  '>1.2.3',
  '<=1.2.3',
  '<1.2.3',
  '>1',
  '>=1',
  '<2',
  '<=1',
  '>1.2',
  '<1.2',
  '<=1.2',
  '>=0.0.0',
  '=1',
  '=1.2',
  '=0.11.0',
  '1.2.3, 1.2.4',
  '>0.3, <0.4',
  '>=1.0.0, <1.2.3, >=1.2.0',
  '^1.2.3, ~1.2.9',
  '0.0.0',
  '^0.0.0',
  '~0.0.0',
  '<0.0.0',
  '>0.0.0',
);
add(
  'wildcard',
  '*',
  'x',
  'X',
  '1.*',
  '1.x',
  '1.X',
  '1.2.*',
  '1.2.x',
  '1.*.*',
  '1.x.x',
  '1.x.*',
  '0.*',
  '0.0.*',
  '=1.*',
  '>=1.*',
  '^1.*',
  '~1.*',
  '<1.*',
  '>1.*',
  '<=1.*',
  '>=1.2.*',
  '>1.2.*',
  '<1.2.*',
  '^1.2.*',
  '~1.2.*',
  '1.*, 2.*',
  '>=1.*, <2.*',
  ' * ',
  '*  ',
  '  x',
  '1.* ',
);
add('wildcard-beside-comparators', '>1, x', 'x, >1', '*, <2', '<2, *', 'X, 1', '1, X', '>=1, *', '*, *', 'x, x', '* ,1', '1 , *', '1.2, x ', 'x,', '*,');
add('wildcard-major-with-parts', '*.*', 'X.X.X', 'x.x', 'x.1', '*.1', '*.1.2', '*.*.*', 'x.*', 'X.*.1', '*.2.3-alpha', '*-alpha', '*+build', '*.', 'x.');
add('operator-before-wildcard-major', '>=*', '^*', '~*', '<*', '=*', '>*', '<=*', '>= *', '= x', '^X', '~x', '<x', '>=X', '>=*, <2', '^*.1');
add(
  'build-on-partial',
  '1.0+build.5',
  '1.2.*+b',
  '1+b',
  '^1.2+x',
  '1.2+',
  '~1+b',
  '1.*+b',
  '>=1.0+b',
  '1.2.3+build',
  '=1.2.3+b.1',
  '1.2.3+',
  '1.2.3+b..c',
  '1.2.3+_',
  '1.2.3+b.',
  '^1.2.3+b, <2',
  '1.2.3-alpha+b',
  '1.2.3+b-c.d',
);
add(
  'pre-release',
  '1.2.3-alpha',
  '=1.2.3-alpha',
  '^1.0.0-alpha',
  '~1.2.3-beta.2',
  '>=1.0.0-alpha, <2',
  '>1.0.0-alpha',
  '<1.0.0',
  '<1.0.0-beta',
  '1.2-alpha',
  '1-alpha',
  '1.2.3-01',
  '1.2.3-0',
  '1.2.3-0a',
  '1.2.3-alpha.01',
  '1.2.3-',
  '1.2.3-a..b',
  '1.2.3-a.',
  '1.2.3-.a',
  '1.2.3-α',
  '1.2.3-a_b',
  '1.2.3--',
  '1.2.3-x-y',
  '^1.2.3-beta.2, <1.2.3',
);
add(
  'u64',
  '>=0.0.0, <9007199254740993',
  '<9007199254740993',
  '>9007199254740992',
  '=9007199254740993',
  '=9007199254740993.0.0',
  '^9007199254740993',
  '18446744073709551615',
  '18446744073709551616',
  '^18446744073709551615.0.0',
  '<18446744073709551615',
  '1.18446744073709551615',
  '1.18446744073709551616',
  '0.0.18446744073709551615',
  '~1.2.18446744073709551615',
  '99999999999999999999',
  '9007199254740993.*',
  '>=9007199254740992.0.1',
);
add('leading-zeros', '01', '1.02', '1.2.03', '00', '0', '0.0', '0.00', '=01.2.3', '^00.1', '0.0.0-00');
add(
  'whitespace',
  ' 1.2.3',
  '1.2.3 ',
  '  1.2.3  ',
  '> 1',
  '>=  1.2',
  '1 ,2',
  '1, 2',
  '1 , 2',
  '1,2 ',
  '^ 1.2',
  '~ 1',
  ' >=1, <2 ',
  '1 2',
  '1.2 .3',
  '1. 2',
  '>= 1.2 , < 2 ',
  ...Object.entries(WS).flatMap(([, c]) => [`1.2${c}`, `${c}1.2`, `>=${c}1`, `1,${c}2`, `1${c},2`]),
);
add(
  'errors',
  '',
  ' ',
  '  ',
  ',',
  '1,',
  ',1',
  '1,,2',
  '1, ,2',
  '>',
  '>=',
  '^',
  '~',
  '=',
  '<',
  '<=',
  'v1.2.3',
  '=v1.2',
  'V1',
  'latest',
  '1.2.3.4',
  '1.2.3 || 2',
  '1 || 2',
  '1.2 - 1.4',
  '>=1.2 <2',
  '~>1.2',
  '==1',
  '=>1',
  '^^1',
  '>>1',
  '1.*.3',
  '1.x.3',
  '1.2.x.3',
  '-1',
  '+1',
  '1.-2',
  '1.',
  '1..2',
  '.1',
  'a',
  '1a',
  '1.2a',
  '^1.2.3a',
  '1.2.3 4',
  '\u0661',
  '１.２.３',
  '1.2.3;',
  '(1)',
  '1.2.3,2.0.0',
  '<1.2.3 >1',
  '1 - 2',
  '!=1',
);
// At most 32 comparators.
add('comparator-count', Array(32).fill('>=1').join(', '), Array(33).fill('>=1').join(', '));
// yep-ext reads a bare full version as exact (cargo install --version): its `=` form is compared.
for (const [rule, req] of [...REQS]) {
  const t = req.replace(/^ +/, '');
  if (/^[0-9]/.test(t)) REQS.push([`${rule} (as =)`, `=${t}`]);
}

/** [rule, version] for Version::parse (index `vers` fields). */
const VERSIONS = [
  ...POOL.map((v) => ['pool', v]),
  ...[
    'v1.2.3',
    '=1.2.3',
    '1.2',
    '1',
    '01.2.3',
    '1.02.3',
    ' 1.2.3',
    '1.2.3 ',
    '1.2.3\t',
    '1.2.3-',
    '1.2.3-a..b',
    '1.2.3-01',
    '1.2.3-0',
    '1.2.3+',
    '1.2.3+01',
    '1.2.3+b..c',
    '99999999999999999999.0.0',
    '18446744073709551616.0.0',
    '1.2.3.4',
    '1.2.3-α',
    '',
    '1.2.3\u00a0',
  ].map((v) => ['version', v]),
];

const hex = (s) => Buffer.from(s, 'utf8').toString('hex');
const input = `${[...POOL.map((v) => `M ${hex(v)}`), ...VERSIONS.map(([, v]) => `V ${hex(v)}`), ...REQS.map(([, r]) => `R ${hex(r)}`)].join('\n')}\n`;
const output = execFileSync(oracle, { input, encoding: 'utf8' }).trim().split('\n');
const byKey = new Map(
  output.map((line) => {
    const [tag, h, status, ...rest] = line.split(' ');
    return [`${tag} ${h}`, { status, rest: rest.join(' ') }];
  }),
);

const requirements = REQS.map(([rule, req]) => {
  const o = byKey.get(`R ${hex(req)}`);
  if (o.status === 'err') return { rule, req, ok: false, error: o.rest };
  return { rule, req, ok: true, matches: POOL.filter((_, i) => o.rest[i] === '1') };
});
const versions = VERSIONS.map(([rule, version]) => {
  const o = byKey.get(`V ${hex(version)}`);
  return o.status === 'ok' ? { rule, version, ok: true } : { rule, version, ok: false, error: o.rest };
});

mkdirSync(dirname(OUT), { recursive: true });
const json = JSON.stringify(
  {
    source: 'semver 1.0.14 (Debian librust-semver-dev 1.0.14-1): VersionReq::parse, VersionReq::matches, Version::parse',
    generator: 'scripts/cargo-semver-oracle/gen-table.mjs',
    pool: POOL,
    requirements,
    versions,
  },
  null,
  1,
);
// Invisible characters as escapes, so the table reads as what it tests.
writeFileSync(
  OUT,
  `${json.replace(/[\u0085\u00a0\u1680\u2000-\u200b\u2028\u2029\u3000\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`,
);
console.log(`${requirements.length} requirements (${requirements.filter((r) => r.ok).length} valid), ${versions.length} versions -> ${OUT}`);
