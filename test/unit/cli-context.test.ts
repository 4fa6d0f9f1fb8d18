/**
 * The CLI's Context is built once, from the command's parsed flags and the run's
 * io, and nothing changes it afterwards (src/cli/cli-context.ts): the flags that
 * reach core are in it from the start, and a write to it fails.
 */
import { describe, expect, it } from 'vitest';
import { contextFlagsOf, makeCliContext } from '../../src/cli/cli-context.js';
import { COMMANDS } from '../../src/cli/command-table.js';
import type { CliIo, OutStream } from '../../src/cli/cli-io.js';

const out: OutStream = { write: () => {}, isTTY: false, columns: 0, color: false };
const io = (env: Record<string, string> = {}): CliIo => ({
  env: { HOME: '/nonexistent-home', YOLOP_CONFIG_DIR: '/nonexistent-config', ...env },
  cwd: '/',
  stdin: { isTTY: true, async *[Symbol.asyncIterator]() {} },
  stdout: out,
  stderr: { ...out, isTTY: true },
  onInterrupt: () => () => {},
});

describe('the CLI Context', () => {
  it('carries the flags that reach core from the start', () => {
    const ctx = makeCliContext(
      io(),
      { index: 'sparse+https://mirror.example/index', 'git-mirror': 'https://mirror.example/git/', 'min-age': '3d', 'allow-fresh': true, yes: true },
      new AbortController(),
    );
    expect(ctx.indexUrl).toBe('https://mirror.example/index/');
    expect(ctx.gitMirror).toBe('https://mirror.example/git/');
    expect(ctx.env.YEP_EXT_GIT_MIRROR).toBeUndefined();
    expect(ctx.cooldown).toEqual({ minAge: '3d', allowFresh: true });
    expect(ctx.interactive).toBe(false);
    // Terminals on stdin and stderr, no --yes, no --json: it may prompt.
    expect(makeCliContext(io(), {}, new AbortController()).interactive).toBe(true);
    expect(makeCliContext(io(), { json: true }, new AbortController()).interactive).toBe(false);
  });

  it('is not changed after it is built: a write fails', () => {
    const ctx = makeCliContext(io(), { 'min-age': '1d' }, new AbortController());
    expect(Object.isFrozen(ctx)).toBe(true);
    expect(() => {
      (ctx as { cooldown?: unknown }).cooldown = { minAge: '0' };
    }).toThrow(TypeError);
    expect(() => {
      (ctx as { env: unknown }).env = {};
    }).toThrow(TypeError);
    expect(ctx.cooldown).toEqual({ minAge: '1d' });
  });

  it('nor are its parts: the environment, the cooldown, the consent to run package code, the network limits', () => {
    const env = { YEP_EXT_INDEX: 'https://index.example/' };
    const ctx = makeCliContext(io(env), { 'min-age': '1d' }, new AbortController());
    expect(() => {
      (ctx.env as Record<string, string>).YEP_EXT_GIT_MIRROR = 'https://mirror.example/git/';
    }).toThrow(TypeError);
    expect(() => {
      (ctx.cooldown as { allowFresh?: boolean }).allowFresh = true;
    }).toThrow(TypeError);
    expect(() => {
      (ctx.packageCode as { allowBuild: boolean }).allowBuild = true;
    }).toThrow(TypeError);
    expect(() => {
      (ctx.http.limits as { totalMs: number }).totalMs = 1;
    }).toThrow(TypeError);
    expect(ctx.env.YEP_EXT_GIT_MIRROR).toBeUndefined();
    expect(ctx.cooldown).toEqual({ minAge: '1d' });
    expect(ctx.packageCode.allowBuild).toBe(false);
  });
});

describe('the flags that feed the Context', () => {
  const defs = (id: string) => COMMANDS[id]!.flags;

  it("are the shared definitions only: doctor's --timeout (handshake seconds) never becomes the network total", () => {
    expect(contextFlagsOf(defs('doctor'), { timeout: '5', quiet: true, json: true })).toEqual({ quiet: true, json: true });
    expect(makeCliContext(io(), contextFlagsOf(defs('doctor'), { timeout: '0.0004' }), new AbortController()).http.limits.totalMs).toBeGreaterThan(1000);
    expect(contextFlagsOf(defs('install'), { timeout: '5', 'git-mirror': 'https://m.example/git/', 'allow-fresh': true, yes: true })).toEqual({
      timeout: '5',
      'git-mirror': 'https://m.example/git/',
      'allow-fresh': true,
      yes: true,
    });
    expect(contextFlagsOf(defs('update'), { 'git-mirror': 'https://m.example/git/' })).toEqual({ 'git-mirror': 'https://m.example/git/' });
  });
});
