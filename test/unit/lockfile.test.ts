import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, describe, expect, it } from 'vitest';
import { loadLock, parseLock, saveLock, serializeLock, type Lockfile } from '../../src/core/store/lockfile.js';

// Temp dirs made here, removed after the file.
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lock-'));
  dirs.push(dir);
  return dir;
}

const H = `sha256:${'a'.repeat(64)}`;

describe('lockfile', () => {
  const lock: Lockfile = {
    extra: {},
    entries: [
      { name: 'zeta', content_hash: H, source: { type: 'git', url: 'https://h/z.git', rev: 'f'.repeat(40), requested_ref: 'main' } },
      {
        name: 'alpha',
        content_hash: H,
        version: '0.3.0',
        source: { type: 'crate', crate_name: 'yolop-extension-alpha', version: '0.3.0', cksum: 'b'.repeat(64) },
        grant: H,
      },
      { name: 'Mid', content_hash: H, source: { type: 'path', path: '/abs/mid' } },
    ],
  };

  it('writes entries sorted by name in bytes, with the host keys', () => {
    const text = serializeLock(lock);
    const doc = parse(text) as { extensions: Array<Record<string, any>> };
    expect(doc.extensions.map((e) => e.name)).toEqual(['Mid', 'alpha', 'zeta']);
    expect(doc.extensions[1]).toMatchObject({
      name: 'alpha',
      content_hash: H,
      version: '0.3.0',
      source: { type: 'crate', crate_name: 'yolop-extension-alpha', version: '0.3.0' },
    });
    expect(doc.extensions[0]!.version).toBeUndefined();
  });

  it('round-trips unknown keys written by the host or a newer tool', () => {
    const text = `[meta]\nwriter = "future"\n\n[[extensions]]\nname = "a"\ncontent_hash = "${H}"\nfuture_key = [1, 2]\n\n[extensions.source]\ntype = "path"\npath = "/p"\nmirror = "x"\n`;
    const again = parseLock(serializeLock(parseLock(text)));
    expect(again.extra).toEqual({ meta: { writer: 'future' } });
    expect(again.entries[0]).toMatchObject({ future_key: [1, 2], source: { mirror: 'x' } });
  });

  it.each([
    ['empty', ''],
    ['all NUL', '\0\0\0\0'],
    ['invalid TOML', '[[extensions]\nname = '],
    ['truncated', `[[extensions]]\nname = "a"\ncontent_hash = "sha256:ab`],
    ['bad name', `[[extensions]]\nname = "../x"\ncontent_hash = "${H}"\n[extensions.source]\ntype = "path"\npath = "/p"\n`],
    ['no source', `[[extensions]]\nname = "a"\ncontent_hash = "${H}"\n`],
    [
      'duplicate name',
      `[[extensions]]\nname = "a"\ncontent_hash = "${H}"\n[extensions.source]\ntype = "path"\npath = "/p"\n[[extensions]]\nname = "a"\ncontent_hash = "${H}"\n[extensions.source]\ntype = "path"\npath = "/q"\n`,
    ],
  ])('refuses a %s lock, naming the file', (_label, text) => {
    expect(() => parseLock(text, '/c/extensions.lock')).toThrow(/\/c\/extensions\.lock is unreadable/);
  });

  it('a syntax error names file, line and column (message and details)', () => {
    const text = `[[extensions]]\nname = "a"\ncontent_hash = = "x"\n`;
    let err: any;
    try {
      parseLock(text, '/c/extensions.lock');
    } catch (e) {
      err = e;
    }
    expect(err?.message).toContain('(/c/extensions.lock:3:16)');
    expect(err?.message).toContain('invalid TOML at line 3, column 16');
    expect(err?.details).toEqual({ file: '/c/extensions.lock', line: 3, column: 16 });
  });

  it('a bad entry points at its [[extensions]] header', () => {
    const entry = (name: string) => `[[extensions]]\nname = "${name}"\ncontent_hash = "${H}"\n[extensions.source]\ntype = "path"\npath = "/p"\n`;
    let err: any;
    try {
      parseLock(`# header\n\n${entry('a')}\n${entry('../x')}`, '/c/extensions.lock');
    } catch (e) {
      err = e;
    }
    expect(err?.message).toContain('entry 2 has an invalid name "../x" (/c/extensions.lock:10:1)');
    expect(err?.details).toEqual({ file: '/c/extensions.lock', line: 10, column: 1 });
  });

  it('a missing lock is empty; a directory is an error', async () => {
    const dir = tempDir();
    expect((await loadLock(join(dir, 'none'))).entries).toEqual([]);
    mkdirSync(join(dir, 'isdir'));
    await expect(loadLock(join(dir, 'isdir'))).rejects.toThrow(/is a directory/);
  });

  it('saves atomically and skips identical writes', async () => {
    const dir = tempDir();
    const file = join(dir, 'extensions.lock');
    expect(await saveLock(file, lock)).toBe(true);
    expect(await saveLock(file, lock)).toBe(false);
    expect((await loadLock(file)).entries).toHaveLength(3);
    writeFileSync(file, readFileSync(file, 'utf8'));
  });
});
