/**
 * docs/exit-codes.md is a stable, documented table; this ties it to the code and to
 * behaviour. (1) Its rows are exactly ERROR_CODES (src/core/errors.ts): every error code
 * with its status, none more, none less. (2) Every documented status but 0 is produced
 * by some test of the suite (a `code`/`status` … `toBe(N)` on a real run); the two no other
 * file produced, 12 and 70, are produced here. (3) The other direction, nothing exits with
 * an undocumented status, is runCli's own check (test/helpers/home.ts): every CLI run of
 * the suite fails its test on a status the table does not list.
 */
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/errors.js';
import { DOCUMENTED_EXIT_STATUSES, REPO_ROOT, jsonOf, makeTempHome, runCli, runCliProcess, type TempHome } from '../helpers/home.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const DOC = readFileSync(join(REPO_ROOT, 'docs', 'exit-codes.md'), 'utf8');

/** The table's rows: status -> the error codes of its second column. */
function documentedRows(): Map<number, string[]> {
  const rows = new Map<number, string[]>();
  for (const m of DOC.matchAll(/^\| (\d+) \|([^|]*)\|/gm))
    rows.set(
      Number(m[1]),
      [...m[2]!.matchAll(/`(E_[A-Z_]+)`/g)].map((c) => c[1]!),
    );
  return rows;
}

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? testFiles(p) : name.endsWith('.test.ts') ? [p] : [];
  });
}

describe('docs/exit-codes.md', () => {
  it('lists exactly the error codes of ERROR_CODES, each under its exit status', () => {
    const documented: Record<string, number> = {};
    for (const [status, codes] of documentedRows()) for (const code of codes) documented[code] = status;
    expect(documented).toEqual({ ...ERROR_CODES });
    expect([...documentedRows().keys()]).toEqual([...DOCUMENTED_EXIT_STATUSES]);
    // Statuses with no error code of their own: success and a crash outside yep-ext's handling.
    expect([...documentedRows()].filter(([, codes]) => codes.length === 0).map(([s]) => s)).toEqual([0, 1]);
  });

  it('every documented status but 0 is asserted as the exit of a real run by some test', () => {
    const text = testFiles(join(REPO_ROOT, 'test'))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const missing = [...DOCUMENTED_EXIT_STATUSES].filter((s) => s !== 0 && !new RegExp(`\\b(?:code|status)\\b[^\\n]*\\.toBe\\(${s}\\)`).test(text));
    expect(missing).toEqual([]);
  });
});

describe('the statuses no other test produces', () => {
  let home: TempHome;
  let reg: TestRegistry;
  beforeAll(async () => {
    home = makeTempHome('yep-exit-codes-');
    reg = await startRegistry();
  });
  afterAll(async () => {
    await reg.close();
    home.cleanup();
  });

  it('12 (E_UNSUPPORTED): searching a registry whose config.json names no web API', async () => {
    reg.setConfig({ dl: `${reg.url}crates` });
    const r = await runCli(['search', 'lsp', '--index', reg.indexUrl, '--json'], { env: { ...home.env, YEP_EXT_HTTP_RETRIES: '0' } });
    expect(r.code, r.stderr).toBe(12);
    expect(jsonOf(r).error.code).toBe('E_UNSUPPORTED');
  });

  it('70 (E_INTERNAL): an error that is not yep-ext’s own (injected into list) is reported as a bug', async () => {
    // A preload that breaks Array.prototype.sort inside listExtensions only: a TypeError no code of ours throws.
    const preload = join(home.root, 'bug.cjs');
    writeFileSync(
      preload,
      "const sort = Array.prototype.sort;\nArray.prototype.sort = function (...a) { if (/listExtensions/.test(new Error().stack)) throw new TypeError('injected bug'); return sort.apply(this, a); };\n",
    );
    await runCli(['install', join(REPO_ROOT, 'examples', 'echo-node')], { env: home.env });
    const env = { ...home.env, NODE_OPTIONS: `--require=${JSON.stringify(preload)}` };
    const json = await runCliProcess(['list', '--json'], { env });
    expect(json.code, json.stderr).toBe(70);
    expect(jsonOf(json).error).toMatchObject({ code: 'E_INTERNAL', message: 'injected bug' });
    const human = await runCliProcess(['list'], { env });
    expect(human.code).toBe(70);
    expect(human.stderr).toMatch(/^internal error: injected bug\n[\s\S]*This is a bug in yep-ext/);
    expect(human.stdout).toBe('');
  });
});
