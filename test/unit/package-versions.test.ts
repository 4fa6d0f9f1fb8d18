/** Version directory names and the sweep of unreferenced ones (store/package-versions.ts). */
import { mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  dropVersionIfUnused,
  freeVersionId,
  readStoreEntry,
  sweepUnreferencedVersions,
  versionLinkText,
  versionOfLink,
} from '../../src/core/store/package-versions.js';
import { resolvePaths, type Paths } from '../../src/core/paths.js';
import { makeTempHome, type TempHome } from '../helpers/home.js';

const HASH = `sha256:0123456789abcdef${'0'.repeat(48)}`;
let home: TempHome;
let paths: Paths;
beforeEach(() => {
  home = makeTempHome();
  paths = resolvePaths(home.env);
  mkdirSync(paths.packagesDir, { recursive: true });
});
afterEach(() => home.cleanup());

describe('version directories', () => {
  it('are named <name>.<16 hex of the content hash>, with .2, .3 … while that name is taken', async () => {
    expect(await freeVersionId(paths, 'lsp', HASH)).toBe('lsp.0123456789abcdef');
    mkdirSync(join(paths.packagesDir, 'lsp.0123456789abcdef'));
    expect(await freeVersionId(paths, 'lsp', HASH)).toBe('lsp.0123456789abcdef.2');
    mkdirSync(join(paths.packagesDir, 'lsp.0123456789abcdef.2'));
    expect(await freeVersionId(paths, 'lsp', HASH)).toBe('lsp.0123456789abcdef.3');
  });

  it('entries link to them relatively; only links into .yep-packages are ours', async () => {
    expect(versionLinkText(paths, 'lsp.0123456789abcdef')).toBe('.yep-packages/lsp.0123456789abcdef');
    expect(versionOfLink(paths, '.yep-packages/lsp.0123456789abcdef')).toBe('lsp.0123456789abcdef');
    expect(versionOfLink(paths, join(paths.packagesDir, 'lsp.x'))).toBe('lsp.x');
    expect(versionOfLink(paths, '/home/me/src/lsp')).toBeUndefined();
    expect(versionOfLink(paths, '.yep-packages/../lsp')).toBeUndefined();
    expect(versionOfLink(paths, '.yep-packages/a/b')).toBeUndefined();
    symlinkSync('.yep-packages/lsp.0123456789abcdef', join(paths.storeDir, 'lsp'));
    expect(await readStoreEntry(paths, 'lsp')).toEqual({ kind: 'link', text: '.yep-packages/lsp.0123456789abcdef', version: 'lsp.0123456789abcdef' });
    expect(await readStoreEntry(paths, 'gone')).toEqual({ kind: 'none' });
  });

  it('the sweep removes exactly the ones no entry points at', async () => {
    for (const id of ['a.1111111111111111', 'a.2222222222222222', 'b.3333333333333333']) mkdirSync(join(paths.packagesDir, id));
    symlinkSync('.yep-packages/a.2222222222222222', join(paths.storeDir, 'a'));
    symlinkSync(join(paths.packagesDir, 'b.3333333333333333'), join(paths.storeDir, 'b')); // absolute works too
    expect(await sweepUnreferencedVersions(paths, new Set(['a', 'b']))).toEqual(['a.1111111111111111']);
    expect(readdirSync(paths.packagesDir).sort()).toEqual(['a.2222222222222222', 'b.3333333333333333']);
    await dropVersionIfUnused(paths, 'a.2222222222222222'); // in use: kept
    expect(readdirSync(paths.packagesDir).sort()).toEqual(['a.2222222222222222', 'b.3333333333333333']);
  });
});
