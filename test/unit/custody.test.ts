/**
 * The one guard for what yep-ext may delete or write into (src/core/fs/custody.ts), as a
 * table: a directory of its own must be a real directory (a symlink, a file, or a link
 * further down is refused with E_STATE and nothing is touched); in one, only the names
 * yep-ext gives its entries are deleted, a symlink as a link, never followed.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkCustody, makeDirs, makeOwnedDir, removeOwned, type Custody } from '../../src/core/fs/custody.js';
import { makeTempHome, type TempHome } from '../helpers/home.js';

let home: TempHome;
let base: string;
let mine: string;
const area = (owned: string[] = ['.own']): Custody => ({ base, owned, names: /^v\.[0-9a-f]{4}$/, what: 'The test directory' });

beforeEach(() => {
  home = makeTempHome();
  base = join(home.root, 'store');
  mine = join(home.root, 'mine');
  mkdirSync(join(mine, 'docs'), { recursive: true });
  writeFileSync(join(mine, 'thesis.tex'), 'mine\n');
  writeFileSync(join(mine, 'v.abcd'), 'named like ours\n');
  mkdirSync(base, { recursive: true });
});
afterEach(() => home.cleanup());

describe('checkCustody', () => {
  it('a missing directory is "missing"; a real one says whether a name is ours', () => {
    expect(checkCustody(area())).toBe('missing');
    mkdirSync(join(base, '.own'));
    expect(checkCustody(area(), 'v.abcd')).toBe('ours');
    expect(checkCustody(area(), 'thesis.tex')).toBe('foreign');
  });

  for (const [what, make] of [
    ['a symlink to a directory of the user', () => symlinkSync(mine, join(base, '.own'))],
    ['a file', () => writeFileSync(join(base, '.own'), 'x')],
    [
      'a real directory whose child on the way is a symlink',
      () => {
        mkdirSync(join(base, '.own'));
        symlinkSync(mine, join(base, '.own', 'sub'));
      },
    ],
  ] as const) {
    it(`${what}: refused (E_STATE), removeOwned and makeOwnedDir touch nothing`, async () => {
      make();
      const c = area(['.own', 'sub']);
      expect(() => checkCustody(c, 'v.abcd')).toThrow(expect.objectContaining({ code: 'E_STATE' }));
      await expect(removeOwned(c, 'v.abcd')).rejects.toMatchObject({ code: 'E_STATE' });
      await expect(makeOwnedDir(c)).rejects.toMatchObject({ code: 'E_STATE' });
      expect(readFileSync(join(mine, 'v.abcd'), 'utf8')).toBe('named like ours\n');
      expect(readdirSync(mine).sort()).toEqual(['docs', 'thesis.tex', 'v.abcd']);
    });
  }

  it('the base itself may be a symlink (a store on another disk)', () => {
    const real = join(home.root, 'disk2');
    mkdirSync(join(real, '.own'), { recursive: true });
    const linked = join(home.root, 'linked');
    symlinkSync(real, linked);
    expect(checkCustody({ ...area(), base: linked }, 'v.abcd')).toBe('ours');
  });
});

describe('removeOwned', () => {
  it('deletes only names yep-ext gives; a symlink entry is removed as a link, its target kept', async () => {
    const dir = await makeOwnedDir(area());
    mkdirSync(join(dir, 'v.0001', 'bin'), { recursive: true });
    writeFileSync(join(dir, 'notes.txt'), 'mine\n');
    symlinkSync(mine, join(dir, 'v.0002'));
    expect(await removeOwned(area(), 'v.0001')).toBe(true);
    expect(await removeOwned(area(), 'v.0002')).toBe(true);
    expect(await removeOwned(area(), 'notes.txt')).toBe(false);
    expect(await removeOwned(area(), '../store')).toBe(false);
    expect(await removeOwned(area(), 'v.ffff')).toBe(false);
    expect(readdirSync(dir)).toEqual(['notes.txt']);
    expect(readdirSync(mine).sort()).toEqual(['docs', 'thesis.tex', 'v.abcd']);
    expect(existsSync(base)).toBe(true);
    expect(lstatSync(dir).isDirectory()).toBe(true);
  });
});

describe('makeDirs (the one mkdir -p)', () => {
  it('makes every missing level with the mode asked, not only the last', async () => {
    const deep = join(home.root, 'a', 'b', 'c');
    await makeDirs(deep, 0o700);
    for (const dir of [join(home.root, 'a'), join(home.root, 'a', 'b'), deep]) expect(lstatSync(dir).mode & 0o777).toBe(0o700);
    await makeDirs(deep, 0o700);
    expect(readdirSync(deep)).toEqual([]);
  });

  it('a file where a directory must be is refused, not taken for done, and left as it was', async () => {
    const file = join(home.root, 'settings-dir');
    writeFileSync(file, 'the user\n');
    await expect(makeDirs(file)).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(makeDirs(join(file, 'sub'))).rejects.toMatchObject({ code: 'ENOTDIR' });
    expect(readFileSync(file, 'utf8')).toBe('the user\n');
  });
});

describe('removeOwned of a large tree', () => {
  it('gives the event loop turns while it works (the installer lock’s heartbeat is a timer), and still removes a link inside as a link', async () => {
    const tree = join(base, '.own', 'v.abcd');
    for (let d = 0; d < 20; d++) {
      mkdirSync(join(tree, `d${d}`), { recursive: true });
      for (let f = 0; f < 50; f++) writeFileSync(join(tree, `d${d}`, `f${f}`), 'x');
    }
    symlinkSync(mine, join(tree, 'd0', 'to-mine'));
    let turns = 0;
    const timer = setInterval(() => turns++, 0);
    try {
      expect(await removeOwned(area(), 'v.abcd')).toBe(true);
    } finally {
      clearInterval(timer);
    }
    expect(turns, 'timers ran while the 1,000 files were removed').toBeGreaterThan(2);
    expect(existsSync(tree)).toBe(false);
    // The linked directory of the user's, whole: nothing in it followed into or removed.
    expect(readdirSync(mine, { recursive: true }).sort()).toEqual(['docs', 'thesis.tex', 'v.abcd']);
    expect(readFileSync(join(mine, 'thesis.tex'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(mine, 'v.abcd'), 'utf8')).toBe('named like ours\n');
  });
});
