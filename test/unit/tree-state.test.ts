/** The stat signature behind list's cheap check (store/tree-state.ts): what counts as a change, and a bad record is no record. */
import { appendFileSync, chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  SIGNATURE_CHUNK,
  diffSignatures,
  readTreeState,
  signTree,
  signTreeJson,
  signTreeJsonChunks,
  treeStateFile,
  writeTreeState,
  writeTreeStateText,
} from '../../src/core/store/tree-state.js';
import { makeTempHome, type TempHome } from '../helpers/home.js';

let home: TempHome;
let dir: string;
beforeEach(() => {
  home = makeTempHome();
  dir = join(home.root, 'pkg');
  mkdirSync(join(dir, 'bin'), { recursive: true });
  mkdirSync(join(dir, '.git'), { recursive: true });
  writeFileSync(join(dir, 'plugin.json'), '{}');
  writeFileSync(join(dir, 'bin', 'srv'), '#!/bin/sh\n');
  writeFileSync(join(dir, '.git', 'HEAD'), 'x');
});
afterEach(() => home.cleanup());

describe('tree-state', () => {
  it('signs the files the content hash walks (no .git) and names edits, deletions, additions and mode-only changes apart', () => {
    const before = signTree(dir);
    expect(Object.keys(before).sort()).toEqual(['bin/srv', 'plugin.json']);
    expect(diffSignatures(before, signTree(dir))).toEqual({ changed: [], deleted: [], added: [], modeOnly: [] });
    appendFileSync(join(dir, 'plugin.json'), ' ');
    chmodSync(join(dir, 'bin', 'srv'), 0o600);
    writeFileSync(join(dir, 'new.txt'), 'n');
    const d = diffSignatures(before, signTree(dir));
    expect(d).toEqual({ changed: ['plugin.json'], deleted: [], added: ['new.txt'], modeOnly: ['bin/srv'] });
    rmSync(join(dir, 'plugin.json'));
    expect(diffSignatures(before, signTree(dir)).deleted).toEqual(['plugin.json']);
  });

  it('round-trips through the state file, and a malformed or foreign record reads as none', async () => {
    const ctx = home.ctx();
    const state = { format: 1 as const, name: 'demo', dir, content_hash: `sha256:${'0'.repeat(64)}`, binary_file_sha256: null, files: signTree(dir) };
    await writeTreeState(ctx.paths, state);
    expect(readTreeState(ctx.paths, 'demo')).toEqual(state);
    for (const bad of ['not json', '{"format":2}', JSON.stringify({ ...state, name: 'other' }), JSON.stringify({ ...state, files: { a: [1, 2] } })]) {
      writeFileSync(treeStateFile(ctx.paths, 'demo'), bad);
      expect(readTreeState(ctx.paths, 'demo')).toBeUndefined();
    }
    expect(readTreeState(ctx.paths, 'missing')).toBeUndefined();
  });

  it('the compact writer (signatures as JSON text while signing) writes the same record as the record writer (the same bytes without integer-like names)', async () => {
    // Names that need escaping, and a deeper tree, besides the files above.
    mkdirSync(join(dir, 'src', 'a b'), { recursive: true });
    writeFileSync(join(dir, 'src', 'a b', 'q"u\\ote\u00e9.rs'), 'x');
    writeFileSync(join(dir, 'src', 'lib.rs'), 'y'.repeat(5000));
    const ctx = home.ctx();
    const head = { format: 1 as const, name: 'demo', dir, content_hash: `sha256:${'0'.repeat(64)}`, binary_file_sha256: 'ab'.repeat(32) };
    const files = signTree(dir);
    expect(JSON.parse(signTreeJson(dir).toString())).toEqual(files);
    await writeTreeState(ctx.paths, { ...head, files });
    const viaRecord = readFileSync(treeStateFile(ctx.paths, 'demo'));
    await writeTreeStateText(ctx.paths, head, signTreeJson(dir));
    expect(readFileSync(treeStateFile(ctx.paths, 'demo')).equals(viaRecord)).toBe(true);
    expect(readTreeState(ctx.paths, 'demo')).toEqual({ ...head, files });

    // Integer-like names: JSON.stringify of the record moves them first; the parsed record is the same.
    writeFileSync(join(dir, '10'), 'ten');
    writeFileSync(join(dir, '2'), 'two');
    const withNumbers = signTree(dir);
    await writeTreeStateText(ctx.paths, head, signTreeJson(dir));
    expect(readTreeState(ctx.paths, 'demo')).toEqual({ ...head, files: withNumbers });
    expect(Object.keys(withNumbers)).toEqual(expect.arrayContaining(['2', '10']));
  });
  it('signs a large tree into blocks of at most 64 KiB (no buffer grown and copied whole) and writes them as the same file as one buffer', async () => {
    // ~1,200 files: ~130 KB of signatures, so three blocks (the 20,000-file install's peak RSS).
    for (let d = 0; d < 12; d++) {
      mkdirSync(join(dir, 'src', `module-${d}`), { recursive: true });
      for (let f = 0; f < 100; f++) writeFileSync(join(dir, 'src', `module-${d}`, `a-rather-long-file-name-${f}-\u00e9.rs`), `${d}/${f}`);
    }
    const ctx = home.ctx();
    const head = { format: 1 as const, name: 'demo', dir, content_hash: `sha256:${'0'.repeat(64)}`, binary_file_sha256: null };
    const chunks = signTreeJsonChunks(dir);
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(SIGNATURE_CHUNK);
    const files = signTree(dir);
    expect(Object.keys(files).length).toBeGreaterThan(1200);
    expect(JSON.parse(Buffer.concat(chunks).toString())).toEqual(files);
    await writeTreeStateText(ctx.paths, head, chunks);
    const viaChunks = readFileSync(treeStateFile(ctx.paths, 'demo'));
    expect(readTreeState(ctx.paths, 'demo')).toEqual({ ...head, files });
    await writeTreeStateText(ctx.paths, head, signTreeJson(dir));
    expect(readFileSync(treeStateFile(ctx.paths, 'demo')).equals(viaChunks)).toBe(true);
    await writeTreeState(ctx.paths, { ...head, files });
    expect(readFileSync(treeStateFile(ctx.paths, 'demo')).equals(viaChunks)).toBe(true);
  });
});
