/** The suite's sequencer (test/longest-first.ts): slowest files first on a clean clone, the last run's durations otherwise. */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import LongestFirst, { SLOW } from '../longest-first.js';

const root = '/repo';
const spec = (path: string): TestSpecification =>
  ({ moduleId: `${root}/${path}`, project: { name: '', config: { root, sequence: { groupOrder: 0 }, isolate: true } } }) as unknown as TestSpecification;
const ctxWith = (durations: Record<string, number>): Vitest =>
  ({
    config: { root },
    cache: {
      getFileTestResults: (key: string) => (key.slice(1) in durations ? { duration: durations[key.slice(1)], failed: false } : undefined),
      getFileStats: () => undefined,
    },
  }) as unknown as Vitest;
const order = async (ctx: Vitest, paths: string[]) => (await new LongestFirst(ctx).sort(paths.map(spec))).map((s) => s.moduleId.slice(root.length + 1));

describe('LongestFirst', () => {
  const files = ['test/unit/a.test.ts', SLOW[2] as string, 'test/cli/b.test.ts', SLOW[0] as string];

  it('with no durations (a clean clone), starts the known slow files first, slowest first, and keeps the rest in order', async () => {
    expect(await order(ctxWith({}), files)).toEqual([SLOW[0], SLOW[2], 'test/unit/a.test.ts', 'test/cli/b.test.ts']);
  });

  it('when the last run timed every file, follows its durations, longest first', async () => {
    const durations = { 'test/unit/a.test.ts': 500, [SLOW[2] as string]: 10, 'test/cli/b.test.ts': 90, [SLOW[0] as string]: 20 };
    expect(await order(ctxWith(durations), files)).toEqual(['test/unit/a.test.ts', 'test/cli/b.test.ts', SLOW[0], SLOW[2]]);
  });

  it('when only some files were timed, falls back to the list', async () => {
    expect(await order(ctxWith({ 'test/unit/a.test.ts': 500 }), files)).toEqual([SLOW[0], SLOW[2], 'test/unit/a.test.ts', 'test/cli/b.test.ts']);
  });

  it('names only files that exist', () => {
    const repo = resolve(import.meta.dirname, '../..');
    expect(SLOW.filter((f) => !existsSync(join(repo, f)))).toEqual([]);
  });
});
