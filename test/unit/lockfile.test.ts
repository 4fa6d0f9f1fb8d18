import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, describe, expect, it } from 'vitest';
import { resolvePaths } from '../../src/core/paths.js';
import { loadLock, loadStoreLock, parseLock, saveLock, saveStoreLock, serializeLock, type Lockfile } from '../../src/core/store/lockfile.js';

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

  describe("the store lock's memo", () => {
    const store = () => {
      const paths = resolvePaths({ YOLOP_CONFIG_DIR: tempDir() });
      mkdirSync(paths.storeDir);
      return paths;
    };
    /** Every table and array with its prototype, so a memo read back must equal smol-toml's own result down to that. */
    const shape = (v: unknown): unknown =>
      Array.isArray(v) ? v.map(shape) : v !== null && typeof v === 'object' ? [Object.getPrototypeOf(v), Object.entries(v).map(([k, x]) => [k, shape(x)])] : v;

    it('reads back exactly what parsing the lock gives (values and null-prototype tables)', async () => {
      const paths = store();
      const withExtras: Lockfile = {
        extra: { tool: { note: 'kept', n: 3 } },
        entries: lock.entries.map((e, i) => (i === 0 ? { ...e, __proto__x: 'y', host: { nested: [1, 2], flag: true } } : e)),
      };
      await saveStoreLock(paths, withExtras);
      const text = readFileSync(paths.lockFile, 'utf8');
      expect(JSON.parse(readFileSync(join(paths.stateDir, 'extensions.lock.json'), 'utf8')).text).toBe(text);
      const read = await loadStoreLock(paths);
      const parsed = parseLock(text, paths.lockFile);
      expect(read).toStrictEqual(parsed);
      expect(shape(read)).toEqual(shape(parsed));
    });

    it('is used only for the text it was made from: a lock the host rewrote is parsed', async () => {
      const paths = store();
      await saveStoreLock(paths, lock);
      // The host (or a hand edit) rewrites the lock: other text, same memo.
      writeFileSync(paths.lockFile, readFileSync(paths.lockFile, 'utf8').replace('version = "0.3.0"\n', 'version = "0.4.0"\n'));
      const read = await loadStoreLock(paths);
      expect(read.entries.find((e) => e.name === 'alpha')?.version).toBe('0.4.0');
      // And a memo whose document was altered is never trusted for another text either.
      expect(read).toStrictEqual(parseLock(readFileSync(paths.lockFile, 'utf8'), paths.lockFile));
    });

    it('is not made for what JSON cannot carry exactly: a date keeps its type through a rewrite', async () => {
      const paths = store();
      writeFileSync(paths.lockFile, `${serializeLock(lock)}\n[tool]\nwhen = 1979-05-27T07:32:00Z\n`);
      await saveStoreLock(paths, await loadStoreLock(paths));
      const read = await loadStoreLock(paths);
      expect(read.extra.tool).toStrictEqual(parse(readFileSync(paths.lockFile, 'utf8')).tool);
      expect((read.extra.tool as { when: unknown }).when).toBeInstanceOf(Date);
      expect(() => readFileSync(join(paths.stateDir, 'extensions.lock.json'))).toThrow(/ENOENT/);
    });
  });
});
