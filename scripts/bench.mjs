#!/usr/bin/env node
/**
 * `npm run bench`: yep-ext against plain baselines, measured in the same run.
 *
 *   npm run bench                      build, then every case (about 3-5 minutes here)
 *   node --import tsx scripts/bench.mjs [--runs N] [--startup-runs N] [--only a,b] [--keep]
 *
 * Builds its own fixtures in a temp dir and starts the loopback test registry
 * (test/helpers/registry.ts, loaded through tsx), then prints ONE table of
 * median wall times: each yep-ext figure next to a baseline run interleaved with
 * it (the machine is noisy: only the ratio means something, and only within one
 * run), the ratio, and the target from issue 8. The same data goes to
 * bench-results/<timestamp>.json. docs/performance.md explains how to read both.
 *
 * Every child runs without NODE_EXTRA_CA_CERTS (it adds ~40 ms to each Node 20
 * process here), in a fresh temp home, with stdout and stderr captured.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBigCrate, buildSmallCrate } from './bench-unpack.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'run.js');
const TIME = '/usr/bin/time';
const MiB = 1024 * 1024;

// ---------------------------------------------------------------- options

const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const RUNS = Number(opt('--runs', 5));
const STARTUP_RUNS = Number(opt('--startup-runs', 21));
const ONLY = opt('--only', '')
  .split(',')
  .filter(Boolean);
const KEEP = argv.includes('--keep');
const wanted = (id) => ONLY.length === 0 || ONLY.some((o) => id.startsWith(o));
const log = (m) => process.stderr.write(`bench: ${m}\n`);

// ---------------------------------------------------------------- processes

const baseEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS', 'NODE_ENV', 'DEBUG'].includes(k) && !k.startsWith('YEP_EXT_') && !k.startsWith('YOLOP_')),
);

/**
 * Run a command to completion; wall time from spawn to exit. With `rss`, run it
 * under /usr/bin/time -f %M for its peak resident set (KiB).
 */
function run(cmd, args, { env = {}, cwd = ROOT, rss = false, input } = {}) {
  return new Promise((resolvePromise, reject) => {
    const rssFile = rss ? join(tmpdir(), `yep-bench-rss-${process.pid}-${Math.random().toString(36).slice(2)}`) : undefined;
    const [file, list] = rssFile ? [TIME, ['-f', '%M', '-o', rssFile, cmd, ...args]] : [cmd, args];
    const t0 = process.hrtime.bigint();
    const child = spawn(file, list, { cwd, env: { ...baseEnv, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      let rssKiB;
      if (rssFile) {
        rssKiB = Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop());
        rmSync(rssFile, { force: true });
      }
      resolvePromise({ ms, code, stdout, stderr, rssKiB });
    });
    child.stdin.end(input ?? '');
  });
}

function must(r, what) {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
  return r;
}

const yep = (args, env, extra = {}) => run(process.execPath, [BIN, ...args], { env, ...extra });

// ---------------------------------------------------------------- statistics

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/**
 * Time `a` (yep-ext) and `b` (baseline) `runs` times, interleaved and alternating
 * which goes first, with per-run set-up and clean-up outside the timing.
 */
async function pair(runs, a, b, { setup = async () => ({}), cleanup = async () => {}, warmup = 1 } = {}) {
  const out = { a: [], b: [] };
  for (let i = 0; i < runs + warmup; i++) {
    const order = i % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
    for (const side of order) {
      const ctx = await setup(side, i);
      const r = await (side === 'a' ? a : b)(ctx, i);
      await cleanup(side, ctx);
      if (i >= warmup) out[side].push(r);
    }
  }
  return out;
}

// ---------------------------------------------------------------- fixtures

/** A minimal valid extension tree: plugin.json + an executable node server (+ optional config field). */
function writeExtension(root, name, { config = false, files = {} } = {}) {
  mkdirSync(join(root, 'bin'), { recursive: true });
  const manifest = {
    name,
    version: '1.0.0',
    description: `bench extension ${name}`,
    yolop: {
      capabilityServer: { command: `${name}-server` },
      tools: [{ name: `${name.replace(/-/g, '_')}_tool` }],
      ...(config ? { config_schema: { type: 'object', properties: { level: { type: 'string', default: 'info' } } } } : {}),
    },
  };
  writeFileSync(join(root, 'plugin.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(root, 'bin', `${name}-server`), '#!/usr/bin/env node\nprocess.stdin.resume();\n');
  chmodSync(join(root, 'bin', `${name}-server`), 0o755);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
}

function tempDir(base, prefix) {
  return mkdtempSync(join(base, prefix));
}

function homeEnv(home, reg) {
  return {
    HOME: join(home, 'home'),
    YOLOP_CONFIG_DIR: join(home, 'config'),
    NO_COLOR: '1',
    LANG: 'C.UTF-8',
    ...(reg ? { YEP_EXT_INDEX: reg.indexUrl } : {}),
  };
}

// ---------------------------------------------------------------- cases

const rows = [];

function addRow(row) {
  rows.push(row);
  const r = row.ratio === undefined ? '' : ` ${row.ratio.toFixed(2)}x`;
  log(`${row.case}: ${row.yep_ms !== undefined ? `${Math.round(row.yep_ms)} ms` : row.yep_text ?? ''} vs ${row.baseline_ms !== undefined ? `${Math.round(row.baseline_ms)} ms` : row.baseline_text ?? ''}${r}`);
}

function skip(id, title, reason) {
  rows.push({ id, case: title, skipped: reason });
  log(`${title}: SKIPPED (${reason})`);
}

async function startupCases(base, reg) {
  const home = tempDir(base, 'home50-');
  const env = homeEnv(home, reg);
  // 50 crate extensions installed the real way; every fifth declares a config field, ten are enabled.
  const names = Array.from({ length: 50 }, (_, i) => `bench${String(i).padStart(2, '0')}`);
  log('publishing and installing 50 small crate extensions ...');
  for (const [i, name] of names.entries()) reg.publish({ name: `yolop-extension-${name}`, vers: '1.0.0', data: smallExtensionCrate(base, name, i % 5 === 0) });
  must(await yep(['install', ...names], env), 'installing 50 extensions');
  for (const name of names.slice(0, 10)) must(await yep(['enable', name], env), `enable ${name}`);

  const nodeE0 = () => run(process.execPath, ['-e', '0']);
  const cases = [
    { id: 'startup-version', title: 'start-up: --version', args: ['--version'], target: 2 },
    { id: 'startup-list', title: 'start-up: list (50 installed, verified)', args: ['list'], target: 3 },
    { id: 'startup-list-json', title: 'start-up: list --json (50 installed)', args: ['list', '--json'], target: 3 },
  ];
  for (const c of cases) {
    if (!wanted(c.id)) continue;
    const got = await pair(STARTUP_RUNS, () => yep(c.args, env).then((r) => must(r, c.title)), nodeE0, { warmup: 2 });
    const a = median(got.a.map((r) => r.ms));
    const b = median(got.b.map((r) => r.ms));
    addRow({ id: c.id, case: c.title, yep_ms: a, baseline: 'node -e 0', baseline_ms: b, ratio: a / b, target: `<= ${c.target}x`, met: a / b <= c.target, runs: STARTUP_RUNS, samples: { yep: got.a.map((r) => r.ms), baseline: got.b.map((r) => r.ms) } });
  }
  return { home, env, names };
}

const crateCache = new Map();
function smallExtensionCrate(base, name, config) {
  const dir = tempDir(base, `crate-${name}-`);
  const crate = buildSmallCrate(dir, {
    files: 3,
    totalBytes: 3 * 1024,
    name: `yolop-extension-${name}`,
    version: '1.0.0',
    extra: (root) => writeExtension(root, name, { config }),
  });
  const data = readFileSync(crate.file);
  rmSync(dir, { recursive: true, force: true });
  crateCache.set(name, data);
  return data;
}

/** `curl -s URL | tee >(openssl dgst -sha256) | tar xz` into a fresh directory (the issue's reference pipeline). */
function shellInstall(url, into) {
  return run('bash', ['-c', 'mkdir -p "$2" && curl -s "$1" | tee >(openssl dgst -sha256 >/dev/null) | tar xz -C "$2"', 'bench', url, into]);
}

async function installCase(base, reg, { id, title, crate, target }) {
  const name = crate.name.replace(/^yolop-extension-/, '');
  const url = reg.downloadUrl(crate.name, crate.version);
  const got = await pair(
    RUNS,
    async (ctx) => must(await yep(['install', `crates.io:${crate.name}@=${crate.version}`], homeEnv(ctx.dir, reg), { rss: existsSync(TIME) }), `install ${name}`),
    async (ctx) => must(await shellInstall(url, join(ctx.dir, 'out')), 'shell pipeline'),
    {
      setup: async () => ({ dir: tempDir(base, 'run-') }),
      cleanup: async (_side, ctx) => rmSync(ctx.dir, { recursive: true, force: true }),
    },
  );
  const a = median(got.a.map((r) => r.ms));
  const b = median(got.b.map((r) => r.ms));
  const rss = got.a.map((r) => r.rssKiB).filter((x) => Number.isFinite(x));
  addRow({
    id,
    case: title,
    yep_ms: a,
    baseline: 'curl | tee >(openssl dgst -sha256) | tar xz',
    baseline_ms: b,
    ratio: a / b,
    target: `<= ${target}x`,
    met: a / b <= target,
    runs: RUNS,
    ...(rss.length ? { yep_peak_rss_mib: Math.max(...rss) / 1024 } : {}),
    crate: { name: crate.name, compressed_mib: crate.size / MiB },
    samples: { yep: got.a.map((r) => r.ms), baseline: got.b.map((r) => r.ms) },
  });
  return rss.length ? Math.max(...rss) / 1024 : undefined;
}

async function installCases(base, reg) {
  const extra = (name) => (root) => writeExtension(root, name);
  if (wanted('install-small')) {
    log('building the 5,000-file crate ...');
    const small = buildSmallCrate(tempDir(base, 'small-'), { name: 'yolop-extension-bench-small', version: '1.0.0', extra: extra('bench-small') });
    reg.publish({ name: small.name, vers: small.version, data: readFileSync(small.file) });
    await installCase(base, reg, { id: 'install-small', title: 'install: 5,000 files, ~60 MB unpacked', crate: small, target: 1.3 });
  }
  if (wanted('install-big') || wanted('rss')) {
    const sizes = [50, 200];
    const peaks = {};
    for (const mb of sizes) {
      log(`building the one-file ${mb} MB crate ...`);
      const big = buildBigCrate(tempDir(base, `big${mb}-`), { bytes: mb * MiB, name: `yolop-extension-bench-big${mb}`, version: '1.0.0', extra: extra(`bench-big${mb}`) });
      reg.publish({ name: big.name, vers: big.version, data: readFileSync(big.file) });
      if (mb === 200 && wanted('install-big')) {
        peaks[mb] = await installCase(base, reg, { id: 'install-big', title: 'install: one 200 MB file', crate: big, target: 1.0 });
      } else {
        // Peak RSS only (timing not a target at this size): three runs, highest peak.
        const got = [];
        for (let i = 0; i < 3 && existsSync(TIME); i++) {
          const dir = tempDir(base, 'rss-');
          got.push(must(await yep(['install', `crates.io:${big.name}@=1.0.0`], homeEnv(dir, reg), { rss: true }), `install ${big.name}`).rssKiB / 1024);
          rmSync(dir, { recursive: true, force: true });
        }
        if (got.length) peaks[mb] = Math.max(...got);
      }
      rmSync(dirname(big.file), { recursive: true, force: true });
    }
    if (!existsSync(TIME)) skip('rss', 'peak RSS of install', `${TIME} is not installed`);
    else if (peaks[50] !== undefined && peaks[200] !== undefined) {
      addRow({
        id: 'rss',
        case: 'peak RSS of install: 200 MB file vs 50 MB file',
        yep_text: `${peaks[200].toFixed(0)} MiB`,
        yep_peak_rss_mib: peaks[200],
        baseline: 'same install, 50 MB file',
        baseline_text: `${peaks[50].toFixed(0)} MiB`,
        baseline_peak_rss_mib: peaks[50],
        ratio: peaks[200] / peaks[50],
        target: '< 100 MiB, flat',
        met: peaks[200] < 100 && peaks[200] / peaks[50] < 1.25,
      });
    }
  }
}

async function doctorCase() {
  const example = join(ROOT, 'examples', 'echo-node');
  if (!existsSync(join(ROOT, 'src', 'commands', 'doctor.ts')) || !existsSync(example)) {
    return skip('doctor', 'doctor on examples/echo-node', 'the doctor command or examples/echo-node is not in this tree yet');
  }
  const home = tempDir(tmpdir(), 'yep-bench-doctor-');
  const env = homeEnv(home);
  const request = JSON.stringify({ id: 1, method: 'initialize', params: { protocol_version: '1.0', session_id: 'bench', workspace_root: ROOT, config: {} } });
  // Spawn the server, send initialize, read the answer; EOF then ends it (as a host would).
  const plain = () => run('bash', ['-c', 'printf "%s\\n" "$1" | "$2" | head -n 1', 'bench', request, join(example, 'bin', 'echo-node')]).then((r) => {
    if (!r.stdout.includes('"result"')) throw new Error(`echo-node did not answer initialize: ${r.stdout} ${r.stderr}`);
    return r;
  });
  const got = await pair(RUNS * 2, () => yep(['doctor', './examples/echo-node', '--json'], env).then((r) => must(r, 'doctor')), plain);
  rmSync(home, { recursive: true, force: true });
  const a = median(got.a.map((r) => r.ms));
  const b = median(got.b.map((r) => r.ms));
  // doctor's own clock (checks only) vs the whole process: the rest is CLI start-up and exit.
  const checksMs = median(got.a.map((r) => JSON.parse(r.stdout).duration_ms));
  addRow({
    id: 'doctor',
    case: 'doctor on examples/echo-node',
    yep_ms: a,
    baseline: 'spawn + initialize round trip',
    baseline_ms: b,
    ratio: a / b,
    target: '<= 1.5x',
    met: a / b <= 1.5,
    runs: RUNS * 2,
    doctor_checks_ms: checksMs,
    samples: { yep: got.a.map((r) => r.ms), baseline: got.b.map((r) => r.ms) },
  });
}

async function updateCase(base, reg, installed) {
  const home = tempDir(base, 'home20-');
  const env = homeEnv(home, reg);
  const names = installed.slice(0, 20);
  must(await yep(['install', ...names], env), 'installing 20 extensions');
  // One counted run: which requests does an already-current update --all make?
  reg.requests.length = 0;
  const spawnedAt = Date.now();
  const counted = must(await yep(['update', '--all'], env), 'update --all');
  const urls = reg.requests.map((r) => r.url);
  const index = urls.filter((u) => u.startsWith('/index/') && !u.endsWith('config.json'));
  const config = urls.filter((u) => u.endsWith('/config.json'));
  const other = urls.filter((u) => !u.startsWith('/index/'));
  const first = Math.min(...reg.requests.map((r) => r.at));
  const last = Math.max(...reg.requests.map((r) => r.at));
  // Where the time of that run went: start-up before the first request, the requests, the rest.
  const timeline = { first_request_ms: first - spawnedAt, last_request_ms: last - spawnedAt, exit_ms: Math.round(counted.ms) };
  // Baseline: the same index files fetched by one curl, 8 at a time (what "in parallel" can buy).
  const fetchAll = ['-s', '--parallel', '--parallel-max', '8', ...urls.flatMap((u) => ['-o', '/dev/null', new URL(u, reg.url).href])];
  const got = await pair(RUNS, () => yep(['update', '--all'], env).then((r) => must(r, 'update --all')), () => run('curl', fetchAll).then((r) => must(r, 'curl')));
  const a = median(got.a.map((r) => r.ms));
  const b = median(got.b.map((r) => r.ms));
  addRow({
    id: 'update-all',
    case: 'update --all: 20 current crate extensions',
    yep_ms: a,
    baseline: `curl --parallel: the same ${urls.length} index URLs`,
    baseline_ms: b,
    ratio: a / b,
    target: '~1 index request each, in parallel',
    met: index.length <= names.length && other.length === 0,
    runs: RUNS,
    requests: { index_files: index.length, config_json: config.length, other: other.length, first_to_last_ms: last - first },
    timeline,
    samples: { yep: got.a.map((r) => r.ms), baseline: got.b.map((r) => r.ms) },
  });
}

/** Bytes under a path (files' sizes, as `du --apparent-size` counts them). */
function du(path) {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  return st.isDirectory() ? readdirSync(path).reduce((n, e) => n + du(join(path, e)), 0) : st.size;
}

/**
 * Installing yep-ext itself as users will: `npm install -g` of the packed tarball
 * into a fresh prefix each run (offline: the package has no runtime dependency
 * but the optional keyring, which comes from npm's cache), against unpacking the
 * same tarball with tar. Records the installed size and any npm warning.
 */
async function packageCase(base) {
  const dir = tempDir(base, 'pack-');
  const pack = spawnSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8' });
  if (pack.status !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
  const [info] = JSON.parse(pack.stdout);
  const tgz = join(dir, info.filename);
  let n = 0;
  let warnings = '';
  const got = await pair(
    RUNS,
    async () => {
      const r = must(await run('npm', ['install', '-g', '--prefix', join(dir, `prefix-${n++}`), '--offline', '--no-audit', '--no-fund', tgz]), 'npm install -g');
      warnings += r.stderr.split('\n').filter((l) => /warn/i.test(l)).join('\n');
      return r;
    },
    async () => {
      const out = join(dir, `tar-${n++}`);
      mkdirSync(out);
      return must(await run('tar', ['xzf', tgz, '-C', out]), 'tar xzf');
    },
  );
  const installed = join(dir, 'prefix-0', 'lib', 'node_modules', 'yep-ext');
  const total = du(installed);
  const keyring = du(join(installed, 'node_modules'));
  const a = median(got.a.map((r) => r.ms));
  const b = median(got.b.map((r) => r.ms));
  addRow({
    id: 'package',
    case: 'npm install -g of the packed tarball (offline, fresh prefix)',
    yep_ms: a,
    baseline: 'tar xzf of the same tarball',
    baseline_ms: b,
    ratio: a / b,
    target: 'no warning; size recorded',
    met: warnings === '',
    runs: RUNS,
    note: `installed ${(total / MiB).toFixed(1)} MiB (${((total - keyring) / MiB).toFixed(1)} MiB yep-ext + ${(keyring / MiB).toFixed(1)} MiB optional keyring); tarball ${(info.size / MiB).toFixed(1)} MiB, ${info.entryCount} files${warnings ? `; npm warned: ${warnings}` : ''}`,
    installed_bytes: total,
    keyring_bytes: keyring,
    tarball_bytes: info.size,
    samples: { yep: got.a.map((r) => r.ms), baseline: got.b.map((r) => r.ms) },
  });
}

// ---------------------------------------------------------------- table and JSON

function printTable() {
  const fmt = (ms, text) => (text ?? (ms === undefined ? '-' : ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`));
  const lines = rows.map((r) =>
    r.skipped
      ? [r.case, 'skipped', '', '', '', r.skipped]
      : [
          r.case,
          fmt(r.yep_ms, r.yep_text),
          `${fmt(r.baseline_ms, r.baseline_text)}  ${r.baseline}`,
          r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}x`,
          r.target,
          `${r.met ? 'met' : 'MISSED'}${r.yep_peak_rss_mib !== undefined && r.id !== 'rss' ? `; peak RSS ${r.yep_peak_rss_mib.toFixed(0)} MiB` : ''}${r.requests ? `; requests: ${r.requests.index_files} index + ${r.requests.config_json} config.json + ${r.requests.other} other, within ${r.requests.first_to_last_ms} ms (first at ${r.timeline.first_request_ms} ms)` : ''}${r.doctor_checks_ms !== undefined ? `; checks ${Math.round(r.doctor_checks_ms)} ms of it` : ''}${r.note ? `; ${r.note}` : ''}`,
        ],
  );
  const head = ['case', 'yep-ext', 'baseline (median)', 'ratio', 'target', 'result'];
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  console.log([line(head), line(widths.map((w) => '-'.repeat(w))), ...lines.map(line)].join('\n'));
}

function gitCommit() {
  const r = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

async function main() {
  if (!existsSync(join(ROOT, 'dist', 'bundle', 'fast-path.cjs'))) throw new Error('dist/ is not built: run `npm run build` (or `npm run bench`, which builds first).');
  const started = new Date();
  const loadBefore = loadavg();
  const base = mkdtempSync(join(tmpdir(), 'yep-bench-'));
  let reg;
  try {
    const registryHelper = join(ROOT, 'test', 'helpers', 'registry.ts');
    if (existsSync(registryHelper)) {
      const { startRegistry } = await import(registryHelper);
      reg = await startRegistry();
    }
    let installed = [];
    if (reg) {
      if (wanted('startup') || wanted('update')) installed = (await startupCases(base, reg)).names;
      await installCases(base, reg);
    } else {
      for (const [id, title] of [
        ['startup', 'start-up cases'],
        ['install', 'install cases'],
        ['update-all', 'update --all'],
      ])
        skip(id, title, 'test/helpers/registry.ts (the loopback registry) is not in this tree yet');
    }
    if (wanted('doctor')) await doctorCase();
    if (reg && wanted('update')) await updateCase(base, reg, installed);
    if (wanted('package')) await packageCase(base);
  } finally {
    await reg?.close();
    if (!KEEP) rmSync(base, { recursive: true, force: true });
    else log(`fixtures kept in ${base}`);
  }
  printTable();
  const result = {
    date: started.toISOString(),
    duration_s: (Date.now() - started.getTime()) / 1000,
    git_head: gitCommit(),
    node: process.version,
    cpus: cpus().length,
    loadavg_before: loadBefore,
    loadavg_after: loadavg(),
    runs: RUNS,
    startup_runs: STARTUP_RUNS,
    cases: rows,
  };
  mkdirSync(join(ROOT, 'bench-results'), { recursive: true });
  const file = join(ROOT, 'bench-results', `${started.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  log(`results written to ${file} (${result.duration_s.toFixed(0)} s)`);
}

await main();
