/**
 * A `.crate` from a file:// mirror (net/transport.ts): copied streamed while hashed,
 * like an http download: the digest and size are of exactly the bytes written; a
 * FIFO in the mirror is refused without blocking; a missing file is E_NOT_FOUND;
 * the size cap holds.
 */
import { randomBytes, createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { downloadUrl } from '../../src/core/net/transport.js';
import { makeTempHome, type TempHome } from '../helpers/home.js';

let home: TempHome;
beforeEach(() => {
  home = makeTempHome();
});
afterEach(() => home.cleanup());
const opts = (maxBytes = 64 << 20) => ({ what: 'The crate', maxBytes });
const codeOf = async (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { code?: string; message: string }) => `${e.code}: ${e.message}`,
  );

it('copies a large file streamed, with the SHA-256 and size of exactly the bytes written', async () => {
  const src = join(home.root, 'big.crate');
  const bytes = randomBytes(5 << 20);
  writeFileSync(src, bytes);
  const dest = join(home.root, 'out.partial');
  const got = await downloadUrl(home.ctx(), pathToFileURL(src).href, dest, opts());
  expect(got).toEqual({ url: pathToFileURL(src).href, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
  expect(readFileSync(dest).equals(bytes)).toBe(true);
});

it('a FIFO is refused at once (never blocks); a missing file is E_NOT_FOUND; the size cap holds', async () => {
  const fifo = join(home.root, 'fifo.crate');
  expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
  const dest = join(home.root, 'out.partial');
  expect(await codeOf(downloadUrl(home.ctx(), pathToFileURL(fifo).href, dest, opts()))).toMatch(/^E_STATE: .*FIFO/);
  expect(await codeOf(downloadUrl(home.ctx(), pathToFileURL(join(home.root, 'gone.crate')).href, dest, opts()))).toMatch(/^E_NOT_FOUND: /);
  const small = join(home.root, 'small.crate');
  writeFileSync(small, Buffer.alloc(2048, 1));
  expect(await codeOf(downloadUrl(home.ctx(), pathToFileURL(small).href, dest, opts(1024)))).toMatch(/^E_STATE: .*larger than 1024 bytes/);
  expect(existsSync(dest)).toBe(false);
});
