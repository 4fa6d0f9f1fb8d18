#!/usr/bin/env node
/**
 * `npm run bench`: yep-ext against plain baselines, measured in the same run.
 *
 *   npm run bench                      build, then every case (minutes; docs/performance.md)
 *   npm run bench -- --quick           every row, fewer runs and a shorter RSS curve (a few minutes;
 *                                      also YEP_EXT_BENCH_QUICK=1)
 *   node --import tsx scripts/bench.mjs [--quick] [--runs N] [--startup-runs N] [--only a,b] [--keep]
 *                                       [--bin DIR] [--cpu] [--suite]
 *
 * `--bin DIR` measures the built CLI of another checkout (DIR/bin/run.js) with this
 * bench, for before/after figures; `--cpu` also records each run's CPU time (user + system, its children
 * included, from bash's `times`), which a busy machine disturbs far less than wall
 * time; `--suite` also times one `npx vitest run`.
 *
 * Builds its own fixtures in a temp dir and starts the loopback test registry
 * (test/helpers/registry.ts, loaded through tsx), then prints ONE table of
 * median wall times: each yep-ext figure next to a baseline run interleaved with
 * it (the machine is noisy: only the ratio means something, and only within one
 * run), the ratio, and the row's goal, met or missed; a missed row
 * says why and what would close it (WHY below). The same data goes to
 * bench-results/<timestamp>.json. docs/performance.md explains how to read both.
 *
 * Every child runs without NODE_EXTRA_CA_CERTS (Node 20 reads and parses that file
 * at every start, which would drown the start-up rows), in a fresh temp home, with
 * stdout and stderr captured.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBigCrate, buildSmallCrate } from './bench-unpack.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN_ROOT = process.argv.includes('--bin') ? resolve(process.argv[process.argv.indexOf('--bin') + 1]) : ROOT;
const BIN = join(BIN_ROOT, 'bin', 'run.js');
const TIME = '/usr/bin/time';
const MiB = 1024 * 1024;

// ---------------------------------------------------------------- options

const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const QUICK = argv.includes('--quick') || process.env.YEP_EXT_BENCH_QUICK === '1';
const RUNS = Number(opt('--runs', QUICK ? 3 : 5));
const STARTUP_RUNS = Number(opt('--startup-runs', QUICK ? 9 : 21));
const SUITE = argv.includes('--suite');
// The peak-RSS curve: one-file crates of these sizes, many-file crates of these counts.
const RSS_MB = QUICK ? [1, 200] : [1, 50, 200, 500];
const RSS_FILES = QUICK ? [100, 20_000] : [100, 1_000, 5_000, 20_000];
const RSS_RUNS = QUICK ? 1 : 2;
const ONLY = opt('--only', '').split(',').filter(Boolean);
const CPU = argv.includes('--cpu');
const KEEP = argv.includes('--keep');
const wanted = (id) => ONLY.length === 0 || ONLY.some((o) => id.startsWith(o));
const log = (m) => process.stderr.write(`bench: ${m}\n`);

// ---------------------------------------------------------------- processes

const baseEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS', 'NODE_ENV', 'DEBUG'].includes(k) && !k.startsWith('YEP_EXT_') && !k.startsWith('YOLOP_'),
  ),
);

/** bash's `times` line for its children (`0m0.123s 0m0.045s`: user, system) as milliseconds. */
function childCpuMs(text) {
  const line = text.trim().split('\n')[1] ?? '';
  return [...line.matchAll(/(\d+)m([\d.]+)s/g)].reduce((sum, m) => sum + (Number(m[1]) * 60 + Number(m[2])) * 1000, 0);
}

/**
 * Run a command to completion; wall time from spawn to exit. With `rss`, run it
 * under /usr/bin/time -f %M for its peak resident set (KiB). With --cpu, under bash,
 * whose `times` says the CPU time of the command (and its children).
 */
function run(cmd, args, { env = {}, cwd = ROOT, rss = false, input } = {}) {
  return new Promise((resolvePromise, reject) => {
    const rssFile = rss ? join(tmpdir(), `yep-bench-rss-${process.pid}-${Math.random().toString(36).slice(2)}`) : undefined;
    const cpuFile = CPU ? join(tmpdir(), `yep-bench-cpu-${process.pid}-${Math.random().toString(36).slice(2)}`) : undefined;
    let [file, list] = rssFile ? [TIME, ['-v', '-o', rssFile, cmd, ...args]] : [cmd, args];
    if (cpuFile) [file, list] = ['bash', ['-c', '"$@"; s=$?; times > "$YEP_BENCH_TIMES"; exit $s', 'bench', file, ...list]];
    const t0 = process.hrtime.bigint();
    const child = spawn(file, list, { cwd, env: { ...baseEnv, ...env, ...(cpuFile ? { YEP_BENCH_TIMES: cpuFile } : {}) }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      let rssKiB;
      if (rssFile) {
        rssKiB = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(readFileSync(rssFile, 'utf8'))?.[1]);
        rmSync(rssFile, { force: true });
      }
      let cpuMs;
      if (cpuFile) {
        cpuMs = existsSync(cpuFile) ? childCpuMs(readFileSync(cpuFile, 'utf8')) : undefined;
        rmSync(cpuFile, { force: true });
      }
      resolvePromise({ ms, code, stdout, stderr, rssKiB, cpuMs });
    });
    child.stdin.end(input ?? '');
  });
}

function must(r, what) {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
  return r;
}

const yep = (args, env, extra = {}) => run(process.execPath, [BIN, ...args], { env, ...extra });
/** A row's CPU figures (--cpu): the medians of both sides and their ratio. */
const cpuFigures = (got) => {
  if (!CPU) return {};
  const cpu = (side) => median(got[side].map((r) => r.cpuMs ?? Number.NaN));
  return { cpu: { yep_ms: cpu('a'), baseline_ms: cpu('b'), ratio: cpu('a') / cpu('b') } };
};

// ---------------------------------------------------------------- statistics

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/**
 * Write back every dirty page before a timed run (untimed). yep-ext fsyncs its journal,
 * and on ext4 (data=ordered) that fsync also writes whatever the previous runs left dirty:
 * the last run's tree and its deletion. Without this, each install would pay for its
 * predecessor's pages while the baseline (which never fsyncs) paid nothing, and the
 * install-1mb row would read far worse back to back than on a rested disk.
 */
function settleDisk() {
  spawnSync('sync', [], { stdio: 'ignore' });
}

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
      settleDisk();
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

/**
 * Why a row misses its goal and what would close it: the best current
 * explanation (docs/performance.md, "What bounds each row", says more).
 * Printed only for a missed row.
 */
const WHY = {
  'install-1mb':
    "CPU-bound: loading the CLI bundle, the requests, the unpack and the commit's fsyncs and signing walk on the main thread, the file creations and the inflate on the pool, in series. What would close part of it: no fsync for digest-checked index cache entries, signatures taken from the extractor's own descriptors (docs/performance.md, install-1mb)",
  'update-all':
    'loading the CLI bundle and Node start-up come before the first request; the requests themselves, 8 at a time, are a small part (docs/performance.md, update-all)',
  'frozen-warm':
    "nothing is fetched: the time is loading the CLI bundle with the Node built-ins it needs and checking the 20 trees' stat signatures, manifests and server commands; a loaded machine moves this ratio more than the code does (docs/performance.md, frozen-warm)",
  doctor:
    'below the floor on 2 cores: doctor starts the server twice (the `shutdown` check stops one run with a shutdown request, `stdin_eof` another with EOF alone, and a process can be stopped only once), so three Node processes share two cores; a program that only spawns echo-node twice and does one initialize round trip each is already past 2x. More cores would close it (docs/performance.md, doctor)',
  'install-small':
    "the download is verified before any byte is unpacked (the pipeline streams straight into tar), and node's start-up, the module load and the signing walk are serial where the pipeline overlaps them; file creation is one thread, as tar's is. The row moves with the disk's state and the load (docs/performance.md, install-small)",
  'install-big':
    'the download goes to a .partial file and is verified before unpacking (the spec; the pipeline streams straight into tar); the big file is then written with sync calls between inflates (docs/performance.md, install-big)',
  'rss-200mb':
    "Node's own resident pages plus the install's code, plus socket reads freed between young collections during the download; Node 24's binary is heavier than Node 20's (docs/performance.md, peak RSS)",
  'rss-files':
    'flat from 5,000 files up, but a step between 1,000 and 5,000 files that is not per entry: the writer thread a crate of 2 MiB or more starts (its own isolate and batch buffers), V8 optimising the per-entry code, the young generation growing during the unpack, the socket buffers of a multi-MB download (docs/performance.md, peak RSS)',
  suite:
    "the suite's CPU is mostly the CLI processes it starts (Node's start-up and the command, per run): fewer spawned runs, not faster tests, would close it (docs/performance.md, the test suite)",
};

/** A yep-ext command against `node -e 0`, interleaved: the start-up-bound rows. */
async function vsNode(id, title, target, args, env, { runs = RUNS, setup, cleanup, extra = {} } = {}) {
  const nodeE0 = () => run(process.execPath, ['-e', '0']);
  const got = await pair(runs, (ctx) => yep(args(ctx), env(ctx)).then((r) => must(r, title)), nodeE0, { setup, cleanup, warmup: 1 });
  const a = median(got.a.map((r) => r.ms));
  const b = median(got.b.map((r) => r.ms));
  addRow({
    id,
    case: title,
    yep_ms: a,
    baseline: 'node -e 0',
    baseline_ms: b,
    ratio: a / b,
    target: `<= ${target}x`,
    met: a / b <= target,
    runs,
    ...extra,
    ...cpuFigures(got),
    samples: { yep: got.a.map((r) => r.ms), baseline: got.b.map((r) => r.ms) },
  });
}

function addRow(row) {
  if (row.met === false && WHY[row.id] && !row.why) row.why = WHY[row.id];
  if (row.samples) {
    row.yep_min_ms ??= Math.min(...row.samples.yep);
    // Fleet rows compare runners with each other (N = 1 is the baseline row), not with a
    // baseline program, so they carry no baseline samples.
    if (row.samples.baseline) row.baseline_min_ms ??= Math.min(...row.samples.baseline);
  }
  rows.push(row);
  const r = row.ratio === undefined ? '' : ` ${row.ratio.toFixed(2)}x`;
  log(
    `${row.case}: ${row.yep_ms !== undefined ? `${Math.round(row.yep_ms)} ms` : (row.yep_text ?? '')} vs ${row.baseline_ms !== undefined ? `${Math.round(row.baseline_ms)} ms` : (row.baseline_text ?? '')}${r}`,
  );
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
    addRow({
      id: c.id,
      case: c.title,
      yep_ms: a,
      baseline: 'node -e 0',
      baseline_ms: b,
      ratio: a / b,
      target: `<= ${c.target}x`,
      met: a / b <= c.target,
      runs: STARTUP_RUNS,
      ...cpuFigures(got),
      samples: { yep: got.a.map((r) => r.ms), baseline: got.b.map((r) => r.ms) },
    });
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

/** `curl -s URL | tee >(sha256sum) | tar xz` into a fresh directory (the reference pipeline: what a shell script would do). */
function shellInstall(url, into) {
  return run('bash', ['-c', 'mkdir -p "$2" && curl -s "$1" | tee >(sha256sum >/dev/null) | tar xz -C "$2"', 'bench', url, into]);
}

async function installCase(base, reg, { id, title, crate, target }) {
  const name = crate.name.replace(/^yolop-extension-/, '');
  const url = reg.downloadUrl(crate.name, crate.version);
  // Seconds per run: --quick times two runs of each side and no warm-up run.
  const runs = QUICK ? Math.min(RUNS, 2) : RUNS;
  const got = await pair(
    runs,
    async (ctx) =>
      must(await yep(['install', `crates.io:${crate.name}@=${crate.version}`], homeEnv(ctx.dir, reg), { rss: existsSync(TIME) }), `install ${name}`),
    async (ctx) => must(await shellInstall(url, join(ctx.dir, 'out')), 'shell pipeline'),
    {
      setup: async () => ({ dir: tempDir(base, 'run-') }),
      cleanup: async (_side, ctx) => rmSync(ctx.dir, { recursive: true, force: true }),
      warmup: QUICK ? 0 : 1,
    },
  );
  const a = median(got.a.map((r) => r.ms));
  const b = median(got.b.map((r) => r.ms));
  const rss = got.a.map((r) => r.rssKiB).filter((x) => Number.isFinite(x));
  addRow({
    id,
    case: title,
    yep_ms: a,
    baseline: 'curl | tee >(sha256sum) | tar xz',
    baseline_ms: b,
    ratio: a / b,
    target: `<= ${target}x`,
    met: a / b <= target,
    runs,
    ...(rss.length ? { yep_peak_rss_mib: Math.max(...rss) / 1024 } : {}),
    crate: { name: crate.name, compressed_mib: crate.size / MiB },
    samples: { yep: got.a.map((r) => r.ms), baseline: got.b.map((r) => r.ms) },
  });
  return rss.length ? Math.max(...rss) / 1024 : undefined;
}

async function installCases(base, reg) {
  const extra = (name) => (root) => writeExtension(root, name);
  if (wanted('install-1mb')) {
    log('building the 1 MB crate ...');
    // ~1 MB compressed: 100 source-like files, 3.5 MB unpacked.
    const one = buildSmallCrate(tempDir(base, 'one-'), {
      files: 100,
      totalBytes: 3.5 * MiB,
      name: 'yolop-extension-bench-one',
      version: '1.0.0',
      extra: extra('bench-one'),
    });
    reg.publish({ name: one.name, vers: one.version, data: readFileSync(one.file) });
    await vsNode(
      'install-1mb',
      `install: small crate (${(one.size / MiB).toFixed(1)} MB), fresh home`,
      5,
      () => ['install', `crates.io:${one.name}@=${one.version}`],
      (ctx) => homeEnv(ctx.dir ?? base, reg),
      {
        setup: async (side) => (side === 'a' ? { dir: tempDir(base, 'run-') } : {}),
        cleanup: async (_side, ctx) => ctx.dir && rmSync(ctx.dir, { recursive: true, force: true }),
      },
    );
  }
  if (wanted('install-small')) {
    log('building the 5,000-file crate ...');
    const small = buildSmallCrate(tempDir(base, 'small-'), { name: 'yolop-extension-bench-small', version: '1.0.0', extra: extra('bench-small') });
    reg.publish({ name: small.name, vers: small.version, data: readFileSync(small.file) });
    await installCase(base, reg, { id: 'install-small', title: 'install: 5,000 files, ~60 MB unpacked', crate: small, target: 1.1 });
    rmSync(dirname(small.file), { recursive: true, force: true });
  }
  if (wanted('install-big')) {
    log('building the one-file 200 MB crate ...');
    const big = buildBigCrate(tempDir(base, 'big200-'), { bytes: 200 * MiB, name: 'yolop-extension-bench-big', version: '1.0.0', extra: extra('bench-big') });
    reg.publish({ name: big.name, vers: big.version, data: readFileSync(big.file) });
    await installCase(base, reg, { id: 'install-big', title: 'install: one 200 MB file', crate: big, target: 0.7 });
    rmSync(dirname(big.file), { recursive: true, force: true });
  }
  if (wanted('rss')) await rssCurve(base, reg);
}

/** Peak RSS (KiB -> MiB) of installing `crate` into fresh homes, highest of RSS_RUNS. */
async function peakOfInstall(base, reg, crate) {
  const got = [];
  for (let i = 0; i < RSS_RUNS; i++) {
    const dir = tempDir(base, 'rss-');
    got.push(
      must(await yep(['install', `crates.io:${crate.name}@=${crate.version}`], homeEnv(dir, reg), { rss: true }), `install ${crate.name}`).rssKiB / 1024,
    );
    rmSync(dir, { recursive: true, force: true });
  }
  return Math.max(...got);
}

/**
 * Peak RSS (`/usr/bin/time -v`) of installs across crate sizes (one file of
 * 1 .. 500 MB) and file counts (100 .. 20,000 files of ~2 KB): the two peak-RSS rows
 * plus the whole curve (`rss_curve` in the JSON, a table on stdout).
 */
async function rssCurve(base, reg) {
  if (!existsSync(TIME)) {
    skip('rss-200mb', 'peak RSS: install of one 200 MB file', `${TIME} is not installed`);
    skip('rss-files', 'peak RSS: install of 20,000 files', `${TIME} is not installed`);
    return;
  }
  const nodeRss = [];
  for (let i = 0; i < 3; i++) nodeRss.push((await run(process.execPath, ['-e', '0'], { rss: true })).rssKiB / 1024);
  const node = Math.max(...nodeRss);
  const bytes = {};
  for (const mb of RSS_MB) {
    log(`peak RSS: building the one-file ${mb} MB crate ...`);
    const crate = buildBigCrate(tempDir(base, `rss${mb}-`), {
      bytes: mb * MiB,
      name: `yolop-extension-rss-mb${mb}`,
      version: '1.0.0',
      extra: (root) => writeExtension(root, `rss-mb${mb}`),
    });
    reg.publish({ name: crate.name, vers: crate.version, data: readFileSync(crate.file) });
    bytes[mb] = await peakOfInstall(base, reg, crate);
    log(`peak RSS, ${mb} MB file: ${bytes[mb].toFixed(1)} MiB`);
    rmSync(dirname(crate.file), { recursive: true, force: true });
  }
  const files = {};
  for (const n of RSS_FILES) {
    log(`peak RSS: building the ${n}-file crate ...`);
    const crate = buildSmallCrate(tempDir(base, `rssf${n}-`), {
      files: n,
      totalBytes: n * 2048,
      name: `yolop-extension-rss-files${n}`,
      version: '1.0.0',
      extra: (root) => writeExtension(root, `rss-files${n}`),
    });
    reg.publish({ name: crate.name, vers: crate.version, data: readFileSync(crate.file) });
    files[n] = await peakOfInstall(base, reg, crate);
    log(`peak RSS, ${n} files: ${files[n].toFixed(1)} MiB`);
    rmSync(dirname(crate.file), { recursive: true, force: true });
  }
  rssTable = { node_e0_mib: node, by_file_mb: bytes, by_file_count: files };
  if (bytes[200] !== undefined) {
    addRow({
      id: 'rss-200mb',
      case: 'peak RSS: install of one 200 MB file',
      yep_text: `${bytes[200].toFixed(0)} MiB`,
      yep_peak_rss_mib: bytes[200],
      baseline: 'node -e 0',
      baseline_text: `${node.toFixed(0)} MiB`,
      baseline_peak_rss_mib: node,
      target: '< 80 MiB',
      met: bytes[200] < 80,
    });
  }
  const most = Math.max(...RSS_FILES);
  const least = Math.min(...RSS_FILES);
  if (files[most] !== undefined) {
    // Flat: at most 10% more from the fewest to the most files.
    const growth = files[most] / files[least];
    addRow({
      id: 'rss-files',
      case: `peak RSS: install of ${most.toLocaleString('en')} files`,
      yep_text: `${files[most].toFixed(0)} MiB`,
      yep_peak_rss_mib: files[most],
      baseline: `same install, ${least} files`,
      baseline_text: `${files[least].toFixed(0)} MiB`,
      baseline_peak_rss_mib: files[least],
      ratio: growth,
      target: '< 100 MiB, flat (<= 1.1x)',
      met: files[most] < 100 && growth <= 1.1,
    });
  }
}

let rssTable;

async function doctorCase() {
  const example = join(ROOT, 'examples', 'echo-node');
  if (!existsSync(join(ROOT, 'src', 'commands', 'doctor.ts')) || !existsSync(example)) {
    return skip('doctor', 'doctor on examples/echo-node', 'the doctor command or examples/echo-node is not in this tree yet');
  }
  const home = tempDir(tmpdir(), 'yep-bench-doctor-');
  const env = homeEnv(home);
  const request = JSON.stringify({ id: 1, method: 'initialize', params: { protocol_version: '1.0', session_id: 'bench', workspace_root: ROOT, config: {} } });
  // Spawn the server, send initialize, read the answer; EOF then ends it (as a host would).
  const plain = () =>
    run('bash', ['-c', 'printf "%s\\n" "$1" | "$2" | head -n 1', 'bench', request, join(example, 'bin', 'echo-node')]).then((r) => {
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
    target: '<= 2x',
    met: a / b <= 2,
    runs: RUNS * 2,
    doctor_checks_ms: checksMs,
    ...cpuFigures(got),
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
  if (wanted('update')) {
    await vsNode(
      'update-all',
      'update --all: 20 current crate extensions',
      4,
      () => ['update', '--all'],
      () => env,
      {
        extra: {
          requests: { index_files: index.length, config_json: config.length, other: other.length, first_to_last_ms: last - first },
          request_pattern_met: index.length <= names.length && other.length === 0,
          timeline,
        },
      },
    );
  }
  if (wanted('frozen')) {
    // Warm: every locked entry is already installed with its locked hash (no network).
    await vsNode(
      'frozen-warm',
      'install --frozen, warm, 20 entries',
      3,
      () => ['install', '--frozen'],
      () => env,
    );
  }
}

/** `npx vitest run` once, timed (only with --suite: it takes minutes and all of both cores). */
async function suiteCase() {
  if (!SUITE)
    return skip('suite', '`npm test` wall time (<= 3 min)', 'not run without --suite (the suite takes minutes); its summary line prints the wall time');
  const r = await run('npx', ['vitest', 'run'], { env: { YEP_EXT_REQUIRE_ALL: process.env.YEP_EXT_REQUIRE_ALL ?? '' } });
  addRow({
    id: 'suite',
    case: '`npm test` wall time',
    yep_ms: r.ms,
    baseline: '-',
    baseline_text: '-',
    target: '<= 180 s, green',
    met: r.code === 0 && r.ms <= 180_000,
    note: `exit ${r.code}`,
  });
}

/**
 * A warm `install --frozen` over 20 unchanged entries (a CI cache hit): no network,
 * and no re-hash while the stat signatures recorded at install still match.
 * Baseline: `list --no-verify` on the same home (start-up, lock and
 * manifests read, nothing checked), so the ratio is what checking costs.
 */
async function frozenWarmCase(base, reg, names) {
  const home = tempDir(base, 'frozen20-');
  const env = homeEnv(home, reg);
  const twenty = names.slice(0, 20);
  must(await yep(['install', ...twenty], env), 'installing 20 extensions');
  const lock = join(home, 'project.lock');
  must(await yep(['lock', 'export', lock], env), 'lock export');
  must(await yep(['install', '--frozen', '--lockfile', lock], env), 'first frozen run');
  reg.requests.length = 0;
  const got = await pair(
    RUNS,
    () => yep(['install', '--frozen', '--lockfile', lock], env).then((r) => must(r, 'install --frozen')),
    () => yep(['list', '--no-verify'], env).then((r) => must(r, 'list --no-verify')),
  );
  const requests = reg.requests.length;
  const a = median(got.a.map((r) => r.ms));
  const b = median(got.b.map((r) => r.ms));
  addRow({
    id: 'frozen-requests',
    case: 'install --frozen --lockfile: 20 unchanged entries, requests and checking cost',
    yep_ms: a,
    baseline: 'list --no-verify (same home)',
    baseline_ms: b,
    ratio: a / b,
    target: '0 requests (the ratio: what checking costs)',
    met: requests === 0,
    runs: RUNS,
    note: `${requests} requests`,
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
      const r = must(
        await run('npm', ['install', '-g', '--prefix', join(dir, `prefix-${n++}`), '--offline', '--no-audit', '--no-fund', tgz]),
        'npm install -g',
      );
      warnings += r.stderr
        .split('\n')
        .filter((l) => /warn/i.test(l))
        .join('\n');
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
  const fmt = (ms, text) => text ?? (ms === undefined ? '-' : ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`);
  const withMin = (ms, min, text) => text ?? (min === undefined ? fmt(ms) : `${fmt(ms)} (min ${fmt(min)})`);
  const facts = (r) =>
    [
      r.yep_peak_rss_mib !== undefined && !r.id.startsWith('rss') ? `peak RSS ${r.yep_peak_rss_mib.toFixed(0)} MiB` : '',
      r.requests
        ? `requests: ${r.requests.index_files} index + ${r.requests.config_json} config.json + ${r.requests.other} other, within ${r.requests.first_to_last_ms} ms (first at ${r.timeline.first_request_ms} ms)`
        : '',
      r.doctor_checks_ms !== undefined ? `checks ${Math.round(r.doctor_checks_ms)} ms of it` : '',
      r.cpu ? `CPU ${Math.round(r.cpu.yep_ms)} vs ${Math.round(r.cpu.baseline_ms)} ms, ${r.cpu.ratio.toFixed(2)}x` : '',
      r.note ?? '',
      !r.met && r.why ? `why: ${r.why}` : '',
    ]
      .filter(Boolean)
      .join('; ');
  const lines = rows.map((r) =>
    r.skipped
      ? [r.case, 'skipped', '', '', '', r.skipped]
      : [
          r.case,
          withMin(r.yep_ms, r.yep_min_ms, r.yep_text),
          `${withMin(r.baseline_ms, r.baseline_min_ms, r.baseline_text)}  ${r.baseline}`,
          r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}x`,
          r.target,
          [r.met ? 'met' : 'MISSED', facts(r)].filter(Boolean).join('; '),
        ],
  );
  const head = ['case', 'yep-ext median (min)', 'baseline median (min)', 'ratio', 'goal', 'result'];
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const line = (cells) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  console.log([line(head), line(widths.map((w) => '-'.repeat(w))), ...lines.map(line)].join('\n'));
  if (rssTable) {
    console.log(`\npeak RSS of install (/usr/bin/time -v, highest of ${RSS_RUNS}; node -e 0: ${rssTable.node_e0_mib.toFixed(1)} MiB)`);
    for (const [mb, v] of Object.entries(rssTable.by_file_mb)) console.log(`  one file of ${String(mb).padStart(3)} MB   ${v.toFixed(1)} MiB`);
    for (const [n, v] of Object.entries(rssTable.by_file_count))
      console.log(`  ${Number(n).toLocaleString('en').padStart(6)} files of ~2 KB   ${v.toFixed(1)} MiB`);
  }
}

/**
 * Fleet (docs/fleet.md): N runners (N = 1, 8, 32) each `install --frozen`
 * the same lock of 3 crates concurrently, into their own empty homes, from one
 * nginx-served `yep-ext mirror`. Per runner: wall time (median and max), requests
 * and bytes nginx served (from its access log); the origin registry must see none.
 * Baseline: the N = 1 wall time (the goal is per-runner time flat in N up to the
 * machine's cores). Each N runs twice: every runner with its own (cold) download
 * cache, then all sharing one machine-wide cache warmed by one earlier runner
 * (YEP_EXT_CACHE_DIR), where each runner should fetch only config.json.
 */
async function fleetCase(base, reg) {
  const nginxHelper = join(ROOT, 'test', 'helpers', 'nginx.ts');
  if (!existsSync(nginxHelper)) return skip('fleet', 'fleet: install --frozen from a mirror', 'test/helpers/nginx.ts is not in this tree');
  const { NGINX, startNginx } = await import(nginxHelper);
  if (!NGINX) return skip('fleet', 'fleet: install --frozen from a mirror', 'nginx is not installed (apt-get install nginx)');
  const names = ['fleet-a', 'fleet-b', 'fleet-c'];
  for (const n of names) reg.publish({ name: `yolop-extension-${n}`, vers: '1.0.0', data: smallExtensionCrate(base, n, false) });
  const src = tempDir(base, 'fleet-src-');
  must(await yep(['install', ...names.map((n) => `${n}@=1.0.0`)], homeEnv(src, reg)), 'fleet: source install');
  const lock = join(src, 'fleet.lock');
  must(await yep(['lock', 'export', lock], homeEnv(src, reg)), 'fleet: lock export');
  const mirror = join(tempDir(base, 'fleet-mirror-'), 'm');
  must(await yep(['mirror', mirror, '--lockfile', lock], homeEnv(src, reg)), 'fleet: mirror');
  const nginx = await startNginx(mirror);
  try {
    must(await yep(['mirror', mirror, '--lockfile', lock, '--base-url', nginx.url], homeEnv(src, reg)), 'fleet: mirror --base-url');
    let single;
    for (const [n, cached] of [1, 8, 32].flatMap((k) => [
      [k, false],
      [k, true],
    ])) {
      // With a cache: one machine-wide YEP_EXT_CACHE_DIR, warmed by one earlier runner.
      const cacheDir = cached ? tempDir(base, 'fleet-cache-') : undefined;
      if (cacheDir) {
        const warm = tempDir(base, 'fleet-warm-');
        must(
          await yep(['install', '--frozen', '--lockfile', lock], { ...homeEnv(warm), YEP_EXT_INDEX: `${nginx.url}index/`, YEP_EXT_CACHE_DIR: cacheDir }),
          'fleet: warm the cache',
        );
      }
      const samples = [];
      let served = [];
      let originRequests = 0;
      for (let i = 0; i < Math.max(1, Math.ceil(RUNS / 2)); i++) {
        const homes = Array.from({ length: n }, () => tempDir(base, 'fleet-run-'));
        const before = nginx.accessLog().length;
        const originBefore = reg.requests.length;
        const results = await Promise.all(
          homes.map(async (h) =>
            must(
              await yep(['install', '--frozen', '--lockfile', lock], {
                ...homeEnv(h),
                YEP_EXT_INDEX: `${nginx.url}index/`,
                ...(cacheDir ? { YEP_EXT_CACHE_DIR: cacheDir } : {}),
              }),
              'fleet: frozen install',
            ),
          ),
        );
        served = nginx.accessLog().slice(before);
        originRequests += reg.requests.length - originBefore;
        samples.push(...results.map((r) => r.ms));
        for (const h of homes) rmSync(h, { recursive: true, force: true });
      }
      const perRunner = median(samples);
      if (n === 1 && !cached) single = perRunner;
      const bytes = served.reduce((t, l) => t + l.bytes, 0);
      addRow({
        id: `fleet-${n}${cached ? '-cache' : ''}`,
        case: `fleet: ${n} concurrent install --frozen (3 crates) from nginx${cached ? ', shared cache' : ''}`,
        yep_ms: perRunner,
        baseline: 'N = 1',
        baseline_ms: single,
        ratio: perRunner / single,
        target: n <= cpus().length ? '<= 1.5x (flat up to cores)' : `informational (N > ${cpus().length} cores)`,
        met: n <= cpus().length ? perRunner / single <= 1.5 : originRequests === 0,
        note: `per runner: ${(served.length / n).toFixed(1)} requests, ${(bytes / n / 1024).toFixed(1)} KiB served, max wall ${Math.round(Math.max(...samples))} ms; origin requests: ${originRequests}${cached ? '; one warmed download cache for all runners' : '; a cache per runner (cold)'}`,
        runners: n,
        requests_per_runner: served.length / n,
        bytes_per_runner: bytes / n,
        origin_requests: originRequests,
        shared_cache: cached,
        samples: { yep: samples },
      });
    }
  } finally {
    await nginx.stop();
  }
}

function gitCommit() {
  const r = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: BIN_ROOT, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

async function main() {
  if (!existsSync(join(BIN_ROOT, 'dist', 'bundle', 'cli.cjs')))
    throw new Error('dist/ is not built: run `npm run build` (or `npm run bench`, which builds first).');
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
      if (wanted('startup') || wanted('update') || wanted('frozen')) installed = (await startupCases(base, reg)).names;
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
    if (reg && (wanted('update') || wanted('frozen'))) await updateCase(base, reg, installed);
    if (reg && wanted('frozen') && installed.length >= 20) await frozenWarmCase(base, reg, installed);
    if (wanted('package')) await packageCase(base);
    if (reg && wanted('fleet')) await fleetCase(base, reg);
    if (wanted('suite')) await suiteCase();
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
    quick: QUICK,
    bin: BIN,
    runs: RUNS,
    startup_runs: STARTUP_RUNS,
    cases: rows,
    ...(rssTable ? { rss_curve: rssTable } : {}),
  };
  mkdirSync(join(ROOT, 'bench-results'), { recursive: true });
  const file = join(ROOT, 'bench-results', `${started.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  log(`results written to ${file} (${result.duration_s.toFixed(0)} s)`);
}

await main();
