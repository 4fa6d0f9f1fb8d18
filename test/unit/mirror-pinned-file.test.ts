/**
 * The streamed write-once of a mirrored `.crate` (mirror-tree.ts): the copy is
 * hashed while written and renamed into place only when it hashes to the pin (a
 * scratch file changed after its verification never lands, and no temp is left);
 * a copy already there is kept when it matches and refused when it does not.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { copyPinnedFile, holdsPinnedFile } from '../../src/core/sources/mirror/mirror-tree.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const REL = 'crates/x/x-1.0.0.crate';
let root: string;
let src: string;
const bytes = randomBytes(3 * 1024 * 1024 + 17);
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'yep-mirror-pin-'));
  src = join(root, 'scratch.crate');
  writeFileSync(src, bytes);
  // The mirror's custody makes the directories before the copy (MirrorPlan.makeDirsOf).
  mkdirSync(join(root, 'crates', 'x'), { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

it('copies a multi-MB file byte for byte when it hashes to the pin', async () => {
  expect(await holdsPinnedFile(root, REL, sha(bytes), 'x')).toBe(false);
  await copyPinnedFile(root, REL, src, sha(bytes), 'x');
  expect(readFileSync(join(root, REL)).equals(bytes)).toBe(true);
  expect(readdirSync(join(root, 'crates', 'x'))).toEqual(['x-1.0.0.crate']);
  expect(await holdsPinnedFile(root, REL, sha(bytes), 'x')).toBe(true);
});

it('a source that does not hash to the pin is refused: nothing lands, no temp is left', async () => {
  const other = sha(Buffer.from('something else'));
  await expect(copyPinnedFile(root, REL, src, other, 'x')).rejects.toMatchObject({ code: 'E_INTEGRITY' });
  expect(readdirSync(join(root, 'crates', 'x'))).toEqual([]);
});

it('a copy already there with other bytes is refused (E_INTEGRITY), not rewritten', async () => {
  await copyPinnedFile(root, REL, src, sha(bytes), 'x');
  const tampered = Buffer.from(bytes);
  tampered[0]! ^= 1;
  writeFileSync(join(root, REL), tampered);
  await expect(holdsPinnedFile(root, REL, sha(bytes), 'x')).rejects.toMatchObject({ code: 'E_INTEGRITY' });
  expect(readFileSync(join(root, REL)).equals(tampered)).toBe(true);
});
