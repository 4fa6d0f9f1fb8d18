/**
 * yep-ext as users install it: the checkout packed by `npm pack` (--ignore-scripts: the build
 * the other tests use is not redone) and the tarball installed by `npm install -g --prefix
 * <dir> --offline`. Both take seconds of CPU (npm loads its whole tree, walks the package,
 * compresses it) and give the same result for the same package, so the result is kept in the
 * suite's cache (./test-cache.ts) under a key naming every input npm reads: each file of the
 * directories and files package.json's `files` names (whole directories, a superset of what
 * npm keeps), every file at the checkout's top (package.json, the lock, README, .gitignore,
 * which npm reads for what to leave out), with its mode, and npm's and Node's versions. A
 * caller gets its own copy of the installed prefix.
 *
 * npm packs a copy of exactly those inputs, not the checkout itself: in the checkout `npm
 * pack` also loads the whole node_modules tree (npm's Arborist reads every package in it,
 * for bundled dependencies), a second of CPU that cannot change the tarball of a package
 * that bundles none (asserted). The tarball is the same byte for byte.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { REPO_ROOT } from './home.js';
import { testCacheDir } from './test-cache.js';

export interface PackedInstall {
  /** The paths it holds, as `npm pack --json` lists them. */
  files: string[];
  packStderr: string;
  /** The `--prefix` it was installed into (bin/yep-ext, lib/node_modules/yep-ext). */
  prefix: string;
  installed: string;
  install: { status: number | null; stdout: string; stderr: string };
}

interface Recorded {
  files: string[];
  packStderr: string;
  install: { status: number | null; stdout: string; stderr: string };
}

const npm = (args: string[], cwd: string) => spawnSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' } });

/** The version of the npm on PATH, from its own package.json (no npm process for it). */
function npmVersion(): string {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const bin = join(dir, 'npm');
    if (!existsSync(bin)) continue;
    const pkg = join(dirname(dirname(realpathSync(bin))), 'package.json');
    if (existsSync(pkg)) return (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
    break;
  }
  return npm(['--version'], REPO_ROOT).stdout.trim();
}

function hashTree(hash: ReturnType<typeof createHash>, rel: string): void {
  const abs = join(REPO_ROOT, rel);
  const st = lstatSync(abs, { throwIfNoEntry: false });
  if (!st) return;
  hash.update(`${rel}\0${st.mode}\0`);
  if (st.isDirectory()) for (const e of readdirSync(abs).sort()) hashTree(hash, join(rel, e));
  else if (st.isFile()) hash.update(readFileSync(abs));
}

/** Every path at the checkout's top that npm reads when it packs (see the header), sorted. */
function packInputs(): string[] {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { files: string[]; [key: string]: unknown };
  // A bundled dependency would be packed from node_modules, which the staged copy leaves out.
  if (pkg.bundleDependencies !== undefined || pkg.bundledDependencies !== undefined)
    throw new Error('package.json bundles dependencies: pack the checkout itself');
  const tops = readdirSync(REPO_ROOT).filter((e) => lstatSync(join(REPO_ROOT, e)).isFile());
  // `dist/**/*.d.ts` and `bin/run.js` name their first path segment: the whole directory is taken.
  const named = pkg.files.map((f) => f.split('/')[0]!);
  return [...new Set([...tops, ...named])].sort();
}

function inputsKey(inputs: string[]): string {
  const hash = createHash('sha256').update(`${npmVersion()}\0${process.version}\0`);
  for (const rel of inputs) hashTree(hash, rel);
  return hash.digest('hex').slice(0, 24);
}

/** Pack (a copy of `inputs`) and install into `dir` (where the caller gets it), and keep a copy in `cached` when it installed. */
function packAndInstall(dir: string, cached: string, inputs: string[]): Recorded {
  const staged = join(dir, 'checkout');
  for (const rel of inputs) if (existsSync(join(REPO_ROOT, rel))) cpSync(join(REPO_ROOT, rel), join(staged, rel), { recursive: true, verbatimSymlinks: true });
  const pack = npm(['pack', '--ignore-scripts', '--json', '--pack-destination', dir], staged);
  rmSync(staged, { recursive: true, force: true });
  if (pack.status !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
  const [info] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const install = npm(['install', '-g', '--prefix', join(dir, 'prefix'), '--offline', '--no-audit', '--no-fund', join(dir, info!.filename)], dir);
  const recorded: Recorded = {
    files: info!.files.map((f) => f.path),
    packStderr: pack.stderr,
    install: { status: install.status, stdout: install.stdout, stderr: install.stderr },
  };
  // A failed install is not kept: the next run tries again.
  if (install.status !== 0) return recorded;
  const staging = `${cached}.${process.pid}-${Date.now()}`;
  mkdirSync(staging, { recursive: true });
  copyPrefix(join(dir, 'prefix'), join(staging, 'prefix'));
  writeFileSync(join(staging, 'recorded.json'), JSON.stringify(recorded));
  try {
    renameSync(staging, cached);
  } catch {
    // Another worker put the same result in place first.
    rmSync(staging, { recursive: true, force: true });
  }
  dropOtherKeys(cached);
  return recorded;
}

/**
 * Only the newest checkout's result is kept: each edit of what npm packs makes a new key of
 * some megabytes, and an older one is never asked for again. A staging directory of another
 * worker (`<key>.<pid>-<time>`) is left to it.
 */
function dropOtherKeys(kept: string): void {
  const dir = dirname(kept);
  for (const name of readdirSync(dir)) {
    if (name !== basename(kept) && !name.includes('.')) rmSync(join(dir, name), { recursive: true, force: true });
  }
}

/** bin/yep-ext is a relative link into lib/node_modules: copied as written. */
const copyPrefix = (from: string, to: string) => cpSync(from, to, { recursive: true, verbatimSymlinks: true });

/** The checkout packed and installed into `dir` (the prefix `dir/prefix`). */
export function packedInstall(dir: string): PackedInstall {
  const inputs = packInputs();
  const cached = testCacheDir('npm-pack', inputsKey(inputs));
  let recorded: Recorded;
  if (existsSync(join(cached, 'recorded.json'))) {
    recorded = JSON.parse(readFileSync(join(cached, 'recorded.json'), 'utf8')) as Recorded;
    copyPrefix(join(cached, 'prefix'), join(dir, 'prefix'));
  } else {
    recorded = packAndInstall(dir, cached, inputs);
  }
  const prefix = join(dir, 'prefix');
  return {
    files: recorded.files,
    packStderr: recorded.packStderr,
    prefix,
    installed: join(prefix, 'lib', 'node_modules', 'yep-ext'),
    install: recorded.install,
  };
}
