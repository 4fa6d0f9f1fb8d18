/**
 * pruneCreated (src/core/store/created-dirs.ts): what a run that placed nothing takes away
 * from a home it found never used, and what it must leave to a run at work beside it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createContext } from '../../src/core/context.js';
import { missingForStage, noteCreated, pruneCreated } from '../../src/core/store/created-dirs.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'yep-created-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('pruneCreated', () => {
  const ctxFor = () => createContext({ env: { YOLOP_CONFIG_DIR: join(root, 'cfg'), HOME: root } });

  it('a never-used home: the caches, the staging directory, the store and the config dir go', async () => {
    const ctx = ctxFor();
    const created = missingForStage(ctx);
    expect(created).toEqual([ctx.paths.stagingDir, ctx.paths.storeDir, ctx.paths.configDir]);
    mkdirSync(ctx.paths.stagingDir, { recursive: true });
    mkdirSync(ctx.paths.cacheDir, { recursive: true });
    writeFileSync(join(ctx.paths.cacheDir, 'agent-version.json'), '{}');
    await pruneCreated(ctx, created);
    expect(existsSync(ctx.paths.configDir)).toBe(false);
  });

  it('another run staging in the same new store (parallel first installs) keeps the caches it writes, and the store', async () => {
    const ctx = ctxFor();
    const created = missingForStage(ctx);
    // The other run: its stage in .yep-staging, its index cache written.
    mkdirSync(join(ctx.paths.stagingDir, 'other-run'), { recursive: true });
    mkdirSync(ctx.paths.cacheDir, { recursive: true });
    writeFileSync(join(ctx.paths.cacheDir, 'index-entry'), 'x');
    await pruneCreated(ctx, created);
    expect(existsSync(join(ctx.paths.cacheDir, 'index-entry'))).toBe(true);
    expect(existsSync(join(ctx.paths.stagingDir, 'other-run'))).toBe(true);
  });

  it('a home that existed: nothing noted, nothing taken', async () => {
    const ctx = ctxFor();
    mkdirSync(ctx.paths.stagingDir, { recursive: true });
    mkdirSync(ctx.paths.cacheDir, { recursive: true });
    expect(missingForStage(ctx)).toEqual([]);
    await pruneCreated(ctx, []);
    expect(existsSync(ctx.paths.cacheDir)).toBe(true);
    expect(existsSync(ctx.paths.stagingDir)).toBe(true);
  });
});

describe('noteCreated: the runs of one process in one home (install a b plans both at once)', () => {
  const ctxFor = () => createContext({ env: { YOLOP_CONFIG_DIR: join(root, 'cfg'), HOME: root } });
  /** What a run leaves in a new store while it fetches: the caches it writes. */
  const fetching = (ctx: ReturnType<typeof ctxFor>) => {
    mkdirSync(ctx.paths.cacheDir, { recursive: true });
    writeFileSync(join(ctx.paths.cacheDir, 'index-entry'), 'x');
  };

  it('the run that fails first leaves the store to the one still at work; the last one out takes it away', async () => {
    const ctx = ctxFor();
    const first = noteCreated(ctx);
    const second = noteCreated(ctx);
    fetching(ctx);
    await first(false);
    expect(existsSync(join(ctx.paths.cacheDir, 'index-entry')), 'taken from under the second run').toBe(true);
    await second(false);
    expect(existsSync(ctx.paths.configDir)).toBe(false);
  });

  it('nothing is taken when any of them placed something, whichever ends last; ending twice counts once', async () => {
    const ctx = ctxFor();
    const placer = noteCreated(ctx);
    const failer = noteCreated(ctx);
    fetching(ctx);
    await placer(true);
    await failer(false);
    await failer(false);
    expect(existsSync(join(ctx.paths.cacheDir, 'index-entry'))).toBe(true);
    // A later run starts a new count, noting what is missing then (nothing).
    const later = noteCreated(ctx);
    await later(false);
    expect(existsSync(join(ctx.paths.cacheDir, 'index-entry'))).toBe(true);
  });
});
