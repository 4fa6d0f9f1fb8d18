/**
 * `yep-ext mirror` writes only where it may, and only what it checked:
 * - into a new directory (its parent must exist: the rule `lock export` follows too), an
 *   empty one, or one it made (its .yep-mirror marker); another directory is refused
 *   (exit 7) unless --force, and even then no file yep-ext did not write is replaced;
 * - every locked line is checked (the crate it names, the version, the checksum of the
 *   bytes) before anything is placed: an origin line for one crate that names another is
 *   refused (exit 5, E_INTEGRITY) and the mirror directory is left exactly as it was.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCrate } from '../helpers/crates.js';
import { homePool } from '../helpers/home-pool.js';
import { jsonOf, runCli, type RunResult, type TempHome } from '../helpers/home.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { killAt } from '../helpers/faults.js';

const HELLO = 'yolop-extension-hello';
const OTHER = 'yolop-extension-other';
/** Sorts before hello: mirrored (checked) first. */
const ALPHA = 'yolop-extension-alpha';
let reg: TestRegistry;
let source: TempHome;
/** A lock pinning alpha 1.0.0, hello 0.3.0 and other 0.3.0, as yep-ext wrote it (with `cksum`). */
let lockBoth: string;
/** The same lock as yolop writes it: four fields per entry, no `cksum`. */
let lockHostWritten: string;
const homes = homePool();

function crate(name: string, version: string): Buffer {
  const short = name.replace('yolop-extension-', '');
  const manifest = { name: short, version, yolop: { capabilityServer: { command: `${short}-server` }, tools: [{ name: 'one' }] } };
  return buildCrate({
    name,
    version,
    files: {
      'Cargo.toml': `[package]\nname = "${name}"\nversion = "${version}"\n`,
      'plugin.json': JSON.stringify(manifest),
      [`bin/${short}-server`]: { content: Buffer.from(`#!/bin/sh\n# ${version}\n`), mode: 0o755 },
    },
  });
}

const env = () => ({ ...source.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0' });

async function mirror(dir: string, lock: string, extra: string[] = []): Promise<RunResult> {
  const r = await runCli(['mirror', dir, '--lockfile', lock, '--json', ...extra], { env: env(), timeoutMs: 60_000 });
  expect(r.signal).toBeNull();
  return r;
}

/** Everything under `dir`, links not followed: relative path -> file digest, link text or "dir". */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(dir, r));
      if (st.isSymbolicLink()) out[r] = `link ${readlinkSync(join(dir, r))}`;
      else if (st.isDirectory()) {
        out[r] = 'dir';
        walk(r);
      } else
        out[r] = createHash('sha256')
          .update(readFileSync(join(dir, r)))
          .digest('hex');
    }
  };
  walk('');
  return out;
}

/** A directory of the user's with an index/config.json of its own (another registry's mirror, say). */
function usersDir(): string {
  const dir = join(homes.make().root, 'share');
  mkdirSync(join(dir, 'index'), { recursive: true });
  mkdirSync(join(dir, 'docs'), { recursive: true });
  writeFileSync(join(dir, 'index', 'config.json'), '{"dl": "https://my.registry/api/v1/crates"}\n');
  writeFileSync(join(dir, 'docs', 'thesis.tex'), '\\documentclass{article}\n');
  writeFileSync(join(dir, 'notes.txt'), 'mine\n');
  return dir;
}

beforeAll(async () => {
  reg = await startRegistry();
  reg.publish({ name: HELLO, vers: '0.3.0', data: crate(HELLO, '0.3.0') });
  reg.publish({ name: OTHER, vers: '0.3.0', data: crate(OTHER, '0.3.0') });
  reg.publish({ name: ALPHA, vers: '1.0.0', data: crate(ALPHA, '1.0.0') });
  source = homes.make();
  const r = await runCli(['install', 'alpha@=1.0.0', 'hello@=0.3.0', 'other@=0.3.0'], { env: env() });
  expect(r.code, r.stderr).toBe(0);
  lockBoth = join(source.root, 'both.lock');
  expect((await runCli(['lock', 'export', lockBoth], { env: env() })).code).toBe(0);
  const lock = parse(readFileSync(lockBoth, 'utf8')) as { extensions: Array<Record<string, unknown>> };
  const four = lock.extensions.map((e) => {
    const s = e.source as Record<string, unknown>;
    return { name: e.name, source: { type: s.type, crate_name: s.crate_name, version: s.version }, content_hash: e.content_hash, version: e.version };
  });
  lockHostWritten = join(source.root, 'host.lock');
  writeFileSync(lockHostWritten, stringify({ extensions: four }));
});
afterAll(async () => {
  await reg.close();
  homes.cleanup();
});

describe('mirror into a directory it did not make', () => {
  it("refuses a directory holding the user's files (exit 7): index/config.json and everything else byte-identical", async () => {
    const dir = usersDir();
    const before = tree(dir);
    const r = await mirror(dir, lockBoth);
    expect(r.code, r.stderr).toBe(7);
    expect(jsonOf(r).error).toMatchObject({ code: 'E_CONFLICT' });
    expect(jsonOf(r).error.hint).toContain('--force');
    expect(tree(dir)).toEqual(before);
  });

  it('--force still never replaces a file yep-ext did not write: the same directory is refused, untouched', async () => {
    const dir = usersDir();
    const before = tree(dir);
    const r = await mirror(dir, lockBoth, ['--force']);
    expect(r.code, r.stderr).toBe(7);
    expect(jsonOf(r).error.message).toContain(join(dir, 'index', 'config.json'));
    expect(tree(dir)).toEqual(before);
  });

  it('--force beside files it does not need to touch: the mirror is added, the user files stay; the marker makes later runs need no --force', async () => {
    const dir = join(homes.make().root, 'share');
    mkdirSync(join(dir, 'docs'), { recursive: true });
    writeFileSync(join(dir, 'docs', 'thesis.tex'), 'mine\n');
    writeFileSync(join(dir, 'notes.txt'), 'mine\n');
    const r = await mirror(dir, lockBoth, ['--force']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(dir, 'docs', 'thesis.tex'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('mine\n');
    expect(existsSync(join(dir, '.yep-mirror'))).toBe(true);
    expect(existsSync(join(dir, 'crates', HELLO, `${HELLO}-0.3.0.crate`))).toBe(true);
    const again = await mirror(dir, lockBoth);
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('mine\n');
  });

  it('an empty directory is taken without --force', async () => {
    const dir = join(homes.make().root, 'empty');
    mkdirSync(dir);
    const r = await mirror(dir, lockBoth);
    expect(r.code, r.stderr).toBe(0);
  });
});

describe('a missing directory: one rule for mirror and lock export (the final directory is made, never its parents)', () => {
  it('mirror and lock export both refuse a path whose parent does not exist (exit 3) and create nothing; mirror makes the final directory', async () => {
    const root = homes.make().root;
    const m = await mirror(join(root, 'mnt', 'share', 'mirror'), lockBoth);
    expect(m.code, m.stderr).toBe(3);
    expect(jsonOf(m).error.hint).toContain(`mkdir -p ${join(root, 'mnt', 'share')}`);
    const l = await runCli(['lock', 'export', join(root, 'mnt', 'share', 'x.lock'), '--json'], { env: env() });
    expect(l.code, l.stderr).toBe(3);
    expect(jsonOf(l).error.hint).toContain(`mkdir -p ${join(root, 'mnt', 'share')}`);
    expect(existsSync(join(root, 'mnt'))).toBe(false);
    const ok = await mirror(join(root, 'mirror'), lockBoth);
    expect(ok.code, ok.stderr).toBe(0);
    expect(existsSync(join(root, 'mirror', 'index', 'config.json'))).toBe(true);
    const help = await runCli(['mirror', '--help'], { env: env() });
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('its parent must exist');
    const lockHelp = await runCli(['lock', 'export', '--help'], { env: env() });
    expect(lockHelp.stdout.replace(/\s+/g, ' ')).toContain('its directory must exist');
  });
});

describe('every line is checked before anything is placed', () => {
  /** The origin serves hello's index file with other's line in it (the crate name says other). */
  function poisonHelloIndex(): void {
    const otherLine = JSON.stringify({
      name: OTHER,
      vers: '0.3.0',
      deps: [],
      cksum: createHash('sha256').update(crate(OTHER, '0.3.0')).digest('hex'),
      features: {},
      yanked: false,
    });
    reg.fault(`/index/yo/lo/${HELLO}`, { kind: 'body', body: `${otherLine}\n` });
  }

  for (const [what, lock] of [
    ['a lock yolop wrote (no cksum)', () => lockHostWritten],
    ['a lock yep-ext wrote (with cksum)', () => lockBoth],
  ] as const) {
    it(`an origin line for hello that names another crate (${what}): exit 5, and a new mirror directory is not created`, async () => {
      poisonHelloIndex();
      try {
        const dir = join(homes.make().root, 'new-mirror');
        const r = await mirror(dir, lock());
        expect(r.code, r.stderr).toBe(5);
        expect(jsonOf(r).error).toMatchObject({ code: 'E_INTEGRITY' });
        expect(existsSync(dir), 'no partial mirror').toBe(false);
      } finally {
        reg.clearFaults();
      }
    });
  }

  it('an origin index listing the locked version twice with different lines (the first the genuine one): exit 5, no mirror directory', async () => {
    const genuine = genuineHelloLine();
    const forged = JSON.stringify({ ...JSON.parse(genuine), cksum: 'f'.repeat(64) });
    reg.fault(`/index/yo/lo/${HELLO}`, { kind: 'body', body: `${genuine}\n${forged}\n` });
    try {
      const dir = join(homes.make().root, 'new-mirror');
      const r = await mirror(dir, lockHostWritten);
      expect(r.code, r.stderr).toBe(5);
      expect(jsonOf(r).error).toMatchObject({ code: 'E_INTEGRITY', details: { version: '0.3.0' } });
      expect(jsonOf(r).error.message).toMatch(/more than once/);
      expect(existsSync(dir), 'no partial mirror').toBe(false);
    } finally {
      reg.clearFaults();
    }
  });

  /** hello's genuine index line for the locked version, as the origin serves it. */
  function genuineHelloLine(): string {
    return (reg.indexFile(HELLO) ?? '').split('\n').find((l) => l.includes('"0.3.0"'))!;
  }

  it('an origin index for hello that also lists another crate, at another version: exit 5, no mirror directory (install reads the file the same way)', async () => {
    const genuine = genuineHelloLine();
    const stranger = JSON.stringify({ ...JSON.parse(genuine), name: OTHER, vers: '9.9.9' });
    reg.fault(`/index/yo/lo/${HELLO}`, { kind: 'body', body: `${genuine}\n${stranger}\n` });
    try {
      const dir = join(homes.make().root, 'new-mirror');
      const r = await mirror(dir, lockHostWritten);
      expect(r.code, r.stderr).toBe(5);
      expect(jsonOf(r).error).toMatchObject({ code: 'E_INTEGRITY', details: { line_name: OTHER } });
      expect(existsSync(dir), 'no partial mirror').toBe(false);
    } finally {
      reg.clearFaults();
    }
  });

  it('a locked line in a newer index schema (v 3), which install does not read, is not copied: exit 3, no mirror directory', async () => {
    const genuine = genuineHelloLine();
    reg.fault(`/index/yo/lo/${HELLO}`, { kind: 'body', body: `${JSON.stringify({ ...JSON.parse(genuine), v: 3 })}\n` });
    try {
      const dir = join(homes.make().root, 'new-mirror');
      const r = await mirror(dir, lockHostWritten);
      expect(r.code, r.stderr).toBe(3);
      expect(jsonOf(r).error).toMatchObject({ code: 'E_NOT_FOUND', details: { version: '0.3.0' } });
      expect(existsSync(dir), 'no partial mirror').toBe(false);
    } finally {
      reg.clearFaults();
    }
  });

  it("an origin index holding another crate's line at another version, over an existing mirror: exit 5, the mirror byte-identical", async () => {
    const dir = join(homes.make().root, 'mirror');
    const onlyOther = join(source.root, 'other-only.lock');
    const lock = parse(readFileSync(lockBoth, 'utf8')) as { extensions: Array<{ name: string }> };
    writeFileSync(onlyOther, stringify({ extensions: lock.extensions.filter((e) => e.name === 'other') }));
    expect((await mirror(dir, onlyOther)).code).toBe(0);
    const before = tree(dir);
    const genuine = genuineHelloLine();
    reg.fault(`/index/yo/lo/${HELLO}`, { kind: 'body', body: `${genuine}\n${JSON.stringify({ ...JSON.parse(genuine), name: OTHER, vers: '9.9.9' })}\n` });
    try {
      const r = await mirror(dir, lockHostWritten);
      expect(r.code, r.stderr).toBe(5);
      expect(jsonOf(r).error).toMatchObject({ code: 'E_INTEGRITY', details: { line_name: OTHER } });
    } finally {
      reg.clearFaults();
    }
    expect(tree(dir)).toEqual(before);
  });

  it('the same refusal on an existing mirror leaves it byte-identical (alpha, checked before hello, is not placed either)', async () => {
    const dir = join(homes.make().root, 'mirror');
    const onlyOther = join(source.root, 'other.lock');
    const lock = parse(readFileSync(lockBoth, 'utf8')) as { extensions: Array<{ name: string }> };
    writeFileSync(onlyOther, stringify({ extensions: lock.extensions.filter((e) => e.name === 'other') }));
    expect((await mirror(dir, onlyOther)).code).toBe(0);
    writeFileSync(join(dir, 'README.txt'), 'served by nginx\n');
    const before = tree(dir);
    poisonHelloIndex();
    try {
      const r = await mirror(dir, lockHostWritten, ['--base-url', 'https://mirror.internal/yep/']);
      expect(r.code, r.stderr).toBe(5);
    } finally {
      reg.clearFaults();
    }
    expect(tree(dir)).toEqual(before);
    expect(existsSync(join(dir, 'crates', ALPHA))).toBe(false);
  });
});

describe('the completion record is written last', () => {
  /** The lock pinning hello alone (a mirror of it, then updated with lockBoth). */
  const lockHello = (): string => {
    const lock = parse(readFileSync(lockBoth, 'utf8')) as { extensions: Array<Record<string, unknown>> };
    const file = join(homes.make().root, 'hello.lock');
    writeFileSync(file, stringify({ extensions: lock.extensions.filter((e) => e.name === 'hello') }));
    return file;
  };
  const record = (dir: string) => ({ marker: existsSync(join(dir, '.yep-mirror')), manifest: existsSync(join(dir, 'mirror.json')) });

  it.each(['mirror:after-first-file', 'mirror:before-record'])(
    'a new mirror killed at %s does not look complete; the next run (no --force) finishes it and writes the record last',
    async (point) => {
      const root = homes.make().root;
      const dir = join(root, 'mirror');
      await killAt(point, ['mirror', dir, '--lockfile', lockBoth], env(), join(root, 'paused'));
      expect(record(dir)).toEqual({ marker: false, manifest: false });
      // What it placed is named in its journal, so the next run takes the directory as its own.
      expect(existsSync(join(dir, '.yep-mirror.journal'))).toBe(true);
      const r = await runCli(['mirror', dir, '--lockfile', lockBoth, '--json'], { env: env() });
      expect(r.code, r.stderr).toBe(0);
      expect(record(dir)).toEqual({ marker: true, manifest: true });
      expect(existsSync(join(dir, '.yep-mirror.journal'))).toBe(false);
      const marker = JSON.parse(readFileSync(join(dir, '.yep-mirror'), 'utf8'));
      expect(marker.manifest_sha256).toBe(
        createHash('sha256')
          .update(readFileSync(join(dir, 'mirror.json')))
          .digest('hex'),
      );
      // Every file the record names is there with the bytes it records.
      const manifest = JSON.parse(readFileSync(join(dir, 'mirror.json'), 'utf8')) as { files: Record<string, string> };
      for (const [rel, sha] of Object.entries(manifest.files)) expect(tree(dir)[rel], rel).toBe(sha);
    },
  );

  it('an update of a complete mirror killed before its record takes the old record away (it no longer describes the tree)', async () => {
    const root = homes.make().root;
    const dir = join(root, 'mirror');
    const first = await runCli(['mirror', dir, '--lockfile', lockHello(), '--json'], { env: env() });
    expect(first.code, first.stderr).toBe(0);
    expect(record(dir).marker).toBe(true);
    await killAt('mirror:before-record', ['mirror', dir, '--lockfile', lockBoth], env(), join(root, 'paused'));
    expect(record(dir).marker).toBe(false);
    const r = await runCli(['mirror', dir, '--lockfile', lockBoth, '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(record(dir).marker).toBe(true);
    expect(existsSync(join(dir, 'crates', OTHER, `${OTHER}-0.3.0.crate`))).toBe(true);
  });
});

describe('a file of its own that the user edited since', () => {
  it.each([
    ['index/config.json', () => '{"dl": "https://cdn.example/crates/{crate}/{version}/download"}\n'],
    ['mirror.json', (old: string) => `${JSON.stringify({ ...JSON.parse(old), note: 'served from the CDN' }, null, 2)}\n`],
  ])('%s: refused without --force (exit 7, the tree byte-identical); --force writes its own and deletes nothing', async (rel, editOf) => {
    const root = homes.make().root;
    const dir = join(root, 'mirror');
    const first = await runCli(['mirror', dir, '--lockfile', lockBoth, '--json'], { env: env() });
    expect(first.code, first.stderr).toBe(0);
    const edit = editOf(readFileSync(join(dir, rel), 'utf8'));
    writeFileSync(join(dir, rel), edit);
    writeFileSync(join(dir, 'README.txt'), 'served by our nginx\n');
    const before = tree(dir);
    const r = await runCli(['mirror', dir, '--lockfile', lockBoth, '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(7);
    expect(jsonOf(r).error).toMatchObject({ code: 'E_CONFLICT', details: { file: rel } });
    expect(jsonOf(r).error.hint).toContain('--force');
    expect(tree(dir)).toEqual(before);
    const forced = await runCli(['mirror', dir, '--lockfile', lockBoth, '--force', '--json'], { env: env() });
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(join(dir, rel), 'utf8')).not.toBe(edit);
    expect(readFileSync(join(dir, 'README.txt'), 'utf8')).toBe('served by our nginx\n');
    // Nothing that was there is gone.
    expect(Object.keys(tree(dir))).toEqual(expect.arrayContaining(Object.keys(before)));
  });
});
