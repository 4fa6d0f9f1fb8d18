#!/usr/bin/env node
/**
 * Benchmark: unpackCrate (dist/core/archive/unpack.js) against `tar -xzf` on the same file.
 *
 *   npm run build && node scripts/bench-unpack.mjs [--runs 5] [--dir /dev/shm] [--node-tar] [--keep]
 *
 * Builds two crates with GNU tar in a temp dir: ~5,000 small files (~60 MB) and one
 * 200 MB file, then alternates runs of each extractor into fresh directories and
 * prints median wall times, the ratio to GNU tar, and the peak RSS of the Node child.
 * Each unpack runs in its own Node process so RSS is its own; the time reported is
 * measured inside the child around unpackCrate (process start-up excluded, as the
 * CLI pays it once per command, not per crate). `--node-tar` adds node-tar's
 * extraction (sync with 1 MiB reads, and default async) for comparison.
 *
 * File creation dominates on slow filesystems (each create is kernel time on
 * ext4): `--dir /dev/shm` shows the extractor's own overhead.
 *
 * Reusable: `import { benchUnpack } from './bench-unpack.mjs'` returns the rows.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const UNPACK_MODULE = pathToFileURL(resolve(HERE, '../dist/core/archive/unpack.js')).href;
const TAR_MODULE = pathToFileURL(resolve(HERE, '../node_modules/tar/dist/esm/index.js')).href;

/** Deterministic, gzip-realistic text (source-code-like compression ratio ~3-4x). */
function makeTextPool(bytes) {
  const words = [];
  let seed = 12345;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  for (let i = 0; i < 4000; i++) {
    let w = '';
    const n = 2 + Math.floor(rnd() * 9);
    for (let j = 0; j < n; j++) w += String.fromCharCode(97 + Math.floor(rnd() * 26));
    words.push(w);
  }
  const parts = [];
  let len = 0;
  while (len < bytes) {
    const line = `${Array.from({ length: 4 + Math.floor(rnd() * 10) }, () => words[Math.floor(rnd() * words.length)]).join(' ')};\n`;
    parts.push(line);
    len += line.length;
  }
  return Buffer.from(parts.join('')).subarray(0, bytes);
}

function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  return r;
}

function buildCrate(dir, name, version, writeTree) {
  const root = `${name}-${version}`;
  const src = join(dir, `src-${name}`);
  mkdirSync(join(src, root), { recursive: true });
  writeTree(join(src, root));
  const file = join(dir, `${root}.crate`);
  // --sort=name: cargo writes its archives sorted by path (GNU tar's default is the
  // directory's order), and yep-ext hashes a sorted archive as it unpacks it.
  sh('tar', ['--format=gnu', '--sort=name', '--owner=0', '--group=0', '--numeric-owner', '-czf', file, '-C', src, root]);
  rmSync(src, { recursive: true, force: true });
  return { file, name, version, size: statSync(file).size };
}

/**
 * `name`/`version` name the crate; `extra(root)` may add files (scripts/bench.mjs
 * adds a plugin.json and a server so the crate installs as an extension).
 */
export function buildSmallCrate(dir, { files = 5000, totalBytes = 60 * 1024 * 1024, name = 'bench-small', version = '0.1.0', extra = () => {} } = {}) {
  const pool = makeTextPool(4 * 1024 * 1024);
  const per = Math.floor(totalBytes / files);
  return buildCrate(dir, name, version, (root) => {
    for (let i = 0; i < files; i++) {
      const sub = join(root, 'src', `m${Math.floor(i / 100)}`);
      if (i % 100 === 0) mkdirSync(sub, { recursive: true });
      const size = Math.max(1, Math.floor(per * (0.5 + ((i * 7919) % 1000) / 1000)));
      const off = (i * 104729) % (pool.length - size);
      writeFileSync(join(sub, `file${i}.rs`), pool.subarray(off, off + size));
    }
    writeFileSync(join(root, 'Cargo.toml'), `[package]\nname = "${name}"\nversion = "${version}"\n`);
    extra(root);
  });
}

export function buildBigCrate(dir, { bytes = 200 * 1024 * 1024, name = 'bench-big', version = '0.1.0', extra = () => {} } = {}) {
  const pool = makeTextPool(8 * 1024 * 1024);
  return buildCrate(dir, name, version, (root) => {
    extra(root);
    // Written copy by copy (a 500 MB file is never held in memory); each copy is
    // varied a little so gzip cannot collapse the repeats.
    const fd = openSync(join(root, 'data.bin'), 'w');
    for (let off = 0, i = 0; off < bytes; off += pool.length, i++) {
      const b = Buffer.from(pool.subarray(0, Math.min(pool.length, bytes - off)));
      if (b.length >= 4) b.writeUInt32LE(i, 0);
      writeSync(fd, b);
    }
    closeSync(fd);
  });
}

function timeTar(crate, into) {
  mkdirSync(into);
  const t0 = process.hrtime.bigint();
  sh('tar', ['-xzf', crate.file, '-C', into]);
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}

function timeChild(code, args) {
  const t0 = process.hrtime.bigint();
  const r = sh(process.execPath, ['--input-type=module', '-e', code, '--', ...args], { env: { ...process.env, NODE_EXTRA_CA_CERTS: '' } });
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  return { ...JSON.parse(r.stdout.toString().trim().split('\n').pop()), wall };
}

const REPORT = `console.log(JSON.stringify({ ms: performance.now() - t0, rssMiB: process.resourceUsage().maxRSS / 1024 }));`;

function timeUnpack(crate, into) {
  const code = `const [file, into, name, version, size] = process.argv.slice(1);
const { unpackCrate } = await import(${JSON.stringify(UNPACK_MODULE)});
const t0 = performance.now();
await unpackCrate(file, into, { crateName: name, version, compressedSize: Number(size) });
${REPORT}`;
  return timeChild(code, [crate.file, into, crate.name, crate.version, String(crate.size)]);
}

function timeNodeTar(crate, into, sync) {
  mkdirSync(into);
  const code = `const [file, into] = process.argv.slice(1);
const tar = await import(${JSON.stringify(TAR_MODULE)});
const t0 = performance.now();
${sync ? 'tar.x({ file, cwd: into, sync: true, maxReadSize: 1 << 20 });' : 'await tar.x({ file, cwd: into });'}
${REPORT}`;
  return timeChild(code, [crate.file, into]);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Build the fixtures, run everything `runs` times, return one row per (crate, tool). */
export function benchUnpack({ runs = 5, nodeTar = false, dir, keep = false, log = () => {} } = {}) {
  const base = dir ?? mkdtempSync(join(tmpdir(), 'yep-bench-unpack-'));
  try {
    log(`building fixtures in ${base} ...`);
    const crates = [buildSmallCrate(base), buildBigCrate(base)];
    const rows = [];
    let n = 0;
    for (const crate of crates) {
      const tools = { 'tar -xzf': (d) => timeTar(crate, d), unpackCrate: (d) => timeUnpack(crate, d) };
      if (nodeTar) {
        tools['node-tar sync'] = (d) => timeNodeTar(crate, d, true);
        tools['node-tar async'] = (d) => timeNodeTar(crate, d, false);
      }
      const results = Object.fromEntries(Object.keys(tools).map((k) => [k, []]));
      for (let r = 0; r < runs; r++) {
        for (const [tool, run] of Object.entries(tools)) {
          const into = join(base, `out-${n++}`);
          results[tool].push(run(into));
          rmSync(into, { recursive: true, force: true });
        }
      }
      const tarMs = median(results['tar -xzf'].map((x) => x.ms));
      for (const [tool, xs] of Object.entries(results)) {
        const ms = median(xs.map((x) => x.ms));
        rows.push({
          crate: `${crate.name} (${(crate.size / 1048576).toFixed(1)} MiB .crate)`,
          tool,
          medianMs: Math.round(ms),
          ratio: Math.round((ms / tarMs) * 100) / 100,
          ...(xs[0].rssMiB !== undefined
            ? { peakRssMiB: Math.round(Math.max(...xs.map((x) => x.rssMiB))), childWallMs: Math.round(median(xs.map((x) => x.wall))) }
            : {}),
        });
      }
      log(`${crate.name}: done`);
    }
    return rows;
  } finally {
    if (!keep && !dir) rmSync(base, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args.includes('--help')) {
    console.log('usage: node scripts/bench-unpack.mjs [--runs N] [--dir DIR] [--node-tar] [--keep]');
    process.exit(0);
  }
  const opt = (name) => (args.indexOf(name) === -1 ? undefined : args[args.indexOf(name) + 1]);
  const dir = opt('--dir') && mkdtempSync(join(resolve(opt('--dir')), 'yep-bench-unpack-'));
  const rows = benchUnpack({
    runs: Number(opt('--runs') ?? 5),
    ...(dir ? { dir } : {}),
    nodeTar: args.includes('--node-tar'),
    keep: args.includes('--keep'),
    log: (m) => process.stderr.write(`${m}\n`),
  });
  console.table(rows);
  if (dir && !args.includes('--keep')) rmSync(dir, { recursive: true, force: true });
}
