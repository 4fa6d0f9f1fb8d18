/**
 * The one reader of files from a home or a package (readRegularFileSync) and the
 * one writer (writeFileAtomic) on real special files: nothing but a regular file
 * (or, where allowed, a symlink to one) is read or replaced, nothing blocks, and
 * every refusal names the file and what it is. Also the one package-file reader
 * not reachable from the CLI with a special file (Cargo.toml inside an unpacked
 * crate: the unpack policy lets only regular files in).
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assertReplaceable, writeFileAtomic } from '../../src/core/fs/fs-atomic.js';
import { openRegularFile, readRegularFileSync } from '../../src/core/fs/read-regular-file.js';
import { sha256FileWithSize } from '../../src/core/fs/file-digest.js';
import { writeManifestFromCargo } from '../../src/core/sources/crates-io/cargo-manifest.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'yep-regular-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const fifo = (p: string): string => {
  execFileSync('mkfifo', [p]);
  return p;
};

describe('readRegularFileSync', () => {
  it('reads a regular file, and a symlink to one unless told not to follow', () => {
    writeFileSync(join(dir, 'a'), 'hello');
    symlinkSync(join(dir, 'a'), join(dir, 'link'));
    expect(readRegularFileSync(join(dir, 'a'), 'The file')?.toString()).toBe('hello');
    expect(readRegularFileSync(join(dir, 'link'), 'The file')?.toString()).toBe('hello');
    expect(() => readRegularFileSync(join(dir, 'link'), 'The file', { followSymlinks: false })).toThrow(
      /The file .*link is a symbolic link \(to .*\/a\), not a regular file/,
    );
  });

  it('is undefined for a missing file (or a missing parent)', () => {
    expect(readRegularFileSync(join(dir, 'nope'), 'The file')).toBeUndefined();
    writeFileSync(join(dir, 'plain'), '');
    expect(readRegularFileSync(join(dir, 'plain', 'below'), 'The file')).toBeUndefined();
  });

  it.each([
    ['a FIFO', (p: string) => fifo(p), /is a FIFO \(named pipe\), not a regular file/],
    ['a directory', (p: string) => mkdirSync(p), /is a directory, not a regular file/],
    ['a symlink to /dev/null', (p: string) => symlinkSync('/dev/null', p), /is a symbolic link to a character device \(\/dev\/null\), not a regular file/],
    [
      'a dangling symlink',
      (p: string) => symlinkSync(join(dir, 'gone'), p),
      /is a dangling symbolic link \(to .*gone, which does not exist\), not a regular file/,
    ],
    ['a symlink to a FIFO', (p: string) => symlinkSync(fifo(join(dir, 'pipe')), p), /is a symbolic link to a FIFO \(named pipe\)/],
    ['a symlink loop', (p: string) => symlinkSync(p, p), /is a symbolic link loop/],
  ])('refuses %s with E_STATE, naming the file', (_label, make, re) => {
    const p = join(dir, 'state.toml');
    make(p);
    let err: any;
    try {
      readRegularFileSync(p, 'The settings file');
    } catch (e) {
      err = e;
    }
    expect(err?.code).toBe('E_STATE');
    expect(err.message).toContain(`The settings file ${p}`);
    expect(err.message).toMatch(re);
  });

  it('takes the caller error code and enforces a size cap', () => {
    mkdirSync(join(dir, 'd'));
    expect(() => readRegularFileSync(join(dir, 'd'), 'The manifest', { code: 'E_MANIFEST' })).toThrow(expect.objectContaining({ code: 'E_MANIFEST' }));
    writeFileSync(join(dir, 'big'), 'x'.repeat(100));
    expect(() => readRegularFileSync(join(dir, 'big'), 'The file', { maxBytes: 99 })).toThrow(/larger than 99 bytes/);
    expect(readRegularFileSync(join(dir, 'big'), 'The file', { maxBytes: 100 })?.length).toBe(100);
  });
});

describe('writeFileAtomic on what is already there', () => {
  it('refuses to replace a FIFO, a directory or a device link, and leaves them as they were', async () => {
    const p = fifo(join(dir, 'pipe'));
    await expect(writeFileAtomic(p, 'x', { what: 'The lockfile' })).rejects.toMatchObject({
      code: 'E_STATE',
      message: expect.stringMatching(/The lockfile .*pipe is a FIFO/),
    });
    expect(lstatSync(p).isFIFO()).toBe(true);
    mkdirSync(join(dir, 'd'));
    await expect(writeFileAtomic(join(dir, 'd'), 'x')).rejects.toMatchObject({ code: 'E_STATE', message: expect.stringMatching(/is a directory/) });
    symlinkSync('/dev/null', join(dir, 'null'));
    await expect(writeFileAtomic(join(dir, 'null'), 'x', { symlinks: 'follow' })).rejects.toMatchObject({ message: expect.stringMatching(/character device/) });
  });

  it('refuses a symlink by default, naming link and target; `follow` writes into the target and keeps the link', async () => {
    const target = join(dir, 'target');
    writeFileSync(target, 'old');
    symlinkSync(target, join(dir, 'link'));
    await expect(writeFileAtomic(join(dir, 'link'), 'new', { what: 'The lockfile' })).rejects.toMatchObject({
      code: 'E_STATE',
      message: `The lockfile ${join(dir, 'link')} is a symbolic link (to ${target}); yep-ext will not write through it.`,
    });
    expect(() => assertReplaceable(join(dir, 'link'))).toThrow(/symbolic link/);
    expect(readFileSync(target, 'utf8')).toBe('old');
    expect(await writeFileAtomic(join(dir, 'link'), 'new', { symlinks: 'follow' })).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('new');
    expect(readlinkSync(join(dir, 'link'))).toBe(target);
  });

  it('refuses a dangling symlink even with `follow` (it would create the target)', async () => {
    symlinkSync(join(dir, 'elsewhere', 'x'), join(dir, 'link'));
    await expect(writeFileAtomic(join(dir, 'link'), 'new', { symlinks: 'follow' })).rejects.toMatchObject({
      message: expect.stringMatching(/dangling symbolic link/),
    });
  });
});

describe("a crate's Cargo.toml that is not a regular file", () => {
  it.each([
    ['a FIFO', (p: string) => fifo(p), /Cargo\.toml is a FIFO/],
    ['a symlink', (p: string) => symlinkSync('/etc/hostname', p), /Cargo\.toml is a symbolic link \(to \/etc\/hostname\)/],
  ])('%s is refused without being opened', async (_label, make, re) => {
    make(join(dir, 'Cargo.toml'));
    await expect(writeManifestFromCargo(dir, 'yolop-extension-x')).rejects.toMatchObject({ code: 'E_STATE', message: expect.stringMatching(re) });
  });
});

/**
 * The other readers of package files go through the same guard: the file hasher `verify`
 * uses on a provisioned binary, the asynchronous opener (file:// mirror copies), and the head
 * read of the server command (`#!`, ELF magic). Each is given a FIFO that no one writes:
 * an open or read that blocked would never return, so each case runs under a deadline.
 */
describe('every package-file reader refuses a FIFO at once', () => {
  const deadline = <T>(p: Promise<T>): Promise<T> =>
    Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('blocked on the FIFO')), 3000).unref())]);

  it('the file hasher refuses a FIFO (verify hashes a provisioned binary with it)', async () => {
    const p = fifo(join(dir, 'server'));
    await expect(deadline(sha256FileWithSize(p))).rejects.toMatchObject({
      code: 'E_STATE',
      message: expect.stringMatching(/is a FIFO \(named pipe\), not a regular file/),
    });
    await expect(sha256FileWithSize(join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('openRegularFile refuses a FIFO, and a symlink to one, without blocking', async () => {
    const p = fifo(join(dir, 'pipe'));
    symlinkSync(p, join(dir, 'link'));
    for (const f of [p, join(dir, 'link')]) await expect(deadline(openRegularFile(f, 'The file'))).rejects.toMatchObject({ code: 'E_STATE' });
    writeFileSync(join(dir, 'plain'), 'abc');
    const opened = await openRegularFile(join(dir, 'plain'), 'The file');
    expect(opened?.stat.size).toBe(3);
    await opened?.handle.close();
  });

  it('readRegularFileSync `head` reads the start of a longer file and still refuses a FIFO', () => {
    writeFileSync(join(dir, 'big'), `#!/bin/sh\n${'x'.repeat(10_000)}`);
    expect(readRegularFileSync(join(dir, 'big'), 'The file', { head: 4, maxBytes: 10 })?.toString()).toBe('#!/b');
    expect(() => readRegularFileSync(fifo(join(dir, 'p2')), 'The file', { head: 4 })).toThrow(/is a FIFO/);
  });
});
