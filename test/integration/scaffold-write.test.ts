/** writeScaffold on a real filesystem: exact modes, all or nothing, and what it refuses to touch. */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { YepError } from '../../src/core/errors.js';
import type { ScaffoldFiles } from '../../src/scaffold/render.js';
import { writeScaffold } from '../../src/scaffold/write.js';

let root: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'yep-scaffold-write-')));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const FILES: ScaffoldFiles = {
  'plugin.json': { content: '{}\n', mode: 0o644 },
  'bin/x': { content: '#!/bin/sh\n', mode: 0o755 },
  'skills/x/SKILL.md': { content: 'skill\n', mode: 0o644 },
};

async function rejection(p: Promise<unknown>): Promise<YepError> {
  const e = await p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(YepError);
  return e as YepError;
}

describe('writeScaffold', () => {
  it('writes every file with its exact mode, whatever the umask', async () => {
    const old = process.umask(0o077);
    try {
      await writeScaffold(join(root, 'x'), FILES);
    } finally {
      process.umask(old);
    }
    expect(readFileSync(join(root, 'x', 'skills', 'x', 'SKILL.md'), 'utf8')).toBe('skill\n');
    expect(statSync(join(root, 'x', 'bin', 'x')).mode & 0o777).toBe(0o755);
    expect(statSync(join(root, 'x', 'plugin.json')).mode & 0o777).toBe(0o644);
    expect(readdirSync(root)).toEqual(['x']);
  });

  it('fills an existing empty directory', async () => {
    mkdirSync(join(root, 'x'));
    await writeScaffold(join(root, 'x'), FILES);
    expect(readdirSync(join(root, 'x')).sort()).toEqual(['bin', 'plugin.json', 'skills']);
    expect(readdirSync(root)).toEqual(['x']);
  });

  it('a failure part-way leaves nothing: no target, no temp directory', async () => {
    // "a" is a file, so "a/b" cannot be written (ENOTDIR) after "a" was.
    const bad: ScaffoldFiles = { a: { content: '1', mode: 0o644 }, 'a/b': { content: '2', mode: 0o644 } };
    const e = await rejection(writeScaffold(join(root, 'x'), bad));
    expect(e.code).toBe('E_STATE');
    expect(e.message).toContain('Nothing was left behind');
    expect(readdirSync(root)).toEqual([]);
  });

  it('refuses a non-empty directory, a file, a symlink (even to an empty dir), leaving each as it was', async () => {
    mkdirSync(join(root, 'full'));
    writeFileSync(join(root, 'full', 'keep'), 'k');
    expect((await rejection(writeScaffold(join(root, 'full'), FILES))).message).toContain('the directory is not empty (keep)');
    writeFileSync(join(root, 'file'), 'f');
    expect((await rejection(writeScaffold(join(root, 'file'), FILES))).code).toBe('E_CONFLICT');
    mkdirSync(join(root, 'emptytarget'));
    symlinkSync(join(root, 'emptytarget'), join(root, 'link'));
    expect((await rejection(writeScaffold(join(root, 'link'), FILES))).message).toContain('symbolic link');
    expect(readdirSync(root).sort()).toEqual(['emptytarget', 'file', 'full', 'link']);
    expect(readdirSync(join(root, 'full'))).toEqual(['keep']);
    expect(readdirSync(join(root, 'emptytarget'))).toEqual([]);
  });

  it('refuses a missing parent (E_NOT_FOUND) and never creates it', async () => {
    const e = await rejection(writeScaffold(join(root, 'nope', 'x'), FILES));
    expect(e.code).toBe('E_NOT_FOUND');
    expect(e.hint).toContain('mkdir -p');
    expect(existsSync(join(root, 'nope'))).toBe(false);
  });

  it.each(['/abs', '../up', 'a/../b', 'a//b', './a', 'a\\b', ''])('refuses the file path %j before writing anything', async (path) => {
    await expect(writeScaffold(join(root, 'x'), { [path]: { content: '', mode: 0o644 } })).rejects.toThrow(/refusing file path/);
    expect(readdirSync(root)).toEqual([]);
  });

  it('sweeps only its own stale temp directories for the same name', async () => {
    const stale = join(root, '.x.yep-new-0123456789ab');
    const fresh = join(root, '.x.yep-new-ba9876543210');
    const otherName = join(root, '.y.yep-new-0123456789ab');
    const notOurs = join(root, '.x.yep-new-keep');
    for (const d of [stale, fresh, otherName, notOurs]) mkdirSync(d);
    const old = new Date(Date.now() - 3600_000);
    for (const d of [stale, otherName, notOurs]) utimesSync(d, old, old);
    await writeScaffold(join(root, 'x'), FILES);
    expect(readdirSync(root).sort()).toEqual(['.x.yep-new-ba9876543210', '.x.yep-new-keep', '.y.yep-new-0123456789ab', 'x']);
  });
});
