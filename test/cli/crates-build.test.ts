/**
 * Build from source, the secondary step: a real crate without dependencies and
 * without artifacts is built by `cargo install --locked` (offline, through
 * CARGO_NET_OFFLINE) into the package's bin/, passes `doctor`, and its digest
 * is in the lock (with --allow-build: a build runs the crate's code, so it needs
 * consent, test/cli/build-consent.test.ts); --no-build leaves it package-only with guidance; --build
 * builds even over a prebuilt; no cargo on PATH, or a crate that fails to
 * compile, leave the package installed with a note.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hostTarget } from '../../src/core/binary/target.js';
import { CARGO_TEST_ENV } from '../helpers/cargo-env.js';
import { buildCrate, FIXTURE_CRATES, readTree } from '../helpers/crates.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { FAST_HTTP_ENV, startRegistry, type TestRegistry } from '../helpers/registry.js';

const cargoPath = spawnSync('sh', ['-c', 'command -v cargo'], { encoding: 'utf8' }).stdout.trim();
const hasCargo = cargoPath !== '' && spawnSync(cargoPath, ['--version']).status === 0;
if (!hasCargo && process.env.YEP_EXT_REQUIRE_ALL === '1') throw new Error('cargo is not on PATH: the build-from-source tests need a Rust toolchain');
const PREBUILT = Buffer.from('#!/bin/sh\nexec cat\n');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
let reg: TestRegistry;
let home: TempHome;
const SOURCE = join(FIXTURE_CRATES, 'yolop-extension-built');

/** The fixture crate under another name (and optionally other plugin.json / main.rs). */
function publishBuilt(name: string, edit: { server?: Record<string, unknown>; mainRs?: string; extra?: Record<string, string> } = {}): void {
  const crate = `yolop-extension-${name}`;
  const tree = readTree(SOURCE);
  const text = (rel: string) => Buffer.from(tree[rel]!.content).toString('utf8');
  const plugin = JSON.parse(text('plugin.json'));
  plugin.name = name;
  Object.assign(plugin.yolop.capabilityServer, edit.server ?? {});
  const files = {
    ...tree,
    'Cargo.toml': text('Cargo.toml').replace('name = "yolop-extension-built"', `name = "${crate}"`),
    'Cargo.lock': text('Cargo.lock').replace('name = "yolop-extension-built"', `name = "${crate}"`),
    'plugin.json': JSON.stringify(plugin, null, 2),
    ...(edit.mainRs ? { 'src/main.rs': edit.mainRs } : {}),
    ...edit.extra,
  };
  reg.publish({ name: crate, vers: '0.1.0', data: buildCrate({ name: crate, version: '0.1.0', files }) });
}

/** Where the daemon a build script starts writes its pid (outside every temp home). */
let daemonDir: string;

beforeAll(async () => {
  reg = await startRegistry();
  daemonDir = mkdtempSync(join(tmpdir(), 'yep-build-daemon-'));
  // A build script that starts a daemon in cargo's process group (its stdio closed, so cargo
  // itself finishes normally) and says where it is.
  const buildRs = `fn main() {\n    std::process::Command::new("sh").arg("-c").arg("sleep 300 </dev/null >/dev/null 2>&1 & echo $! > ${join(daemonDir, 'pid')}").status().unwrap();\n}\n`;
  publishBuilt('daemon', { extra: { 'build.rs': buildRs } });
  publishBuilt('built');
  publishBuilt('broken', { mainRs: 'fn main() { this is not rust }\n' });
  const t = hostTarget() ?? 'none';
  publishBuilt('builtpre', { server: { binaries: `${reg.url}pre/{name}-{target}`, binary_sha256: { [t]: sha(PREBUILT) } } });
  reg.serve(`/pre/builtpre-${t}`, PREBUILT);
});
afterAll(() => {
  reg.close();
  rmSync(daemonDir, { recursive: true, force: true });
});
beforeEach(() => {
  home = makeTempHome();
  reg.requests.length = 0;
});
afterEach(() => home.cleanup());

const env = (extra: Record<string, string> = {}) => ({
  ...home.env,
  ...FAST_HTTP_ENV,
  YEP_EXT_INDEX: reg.indexUrl,
  ...CARGO_TEST_ENV,
  ...extra,
});
const pkgDir = (name: string) => join(home.configDir, 'extensions', name);
function lockSource(name: string): Record<string, unknown> {
  const lock = parse(readFileSync(join(home.configDir, 'extensions', 'extensions.lock'), 'utf8')) as {
    extensions: Array<{ name: string; source: Record<string, unknown> }>;
  };
  return lock.extensions.find((e) => e.name === name)!.source;
}
function files(dir: string, rel = ''): string[] {
  return readdirSync(join(dir, rel))
    .flatMap((n) => (statSync(join(dir, rel, n)).isDirectory() ? files(dir, join(rel, n)) : [join(rel, n)]))
    .sort();
}
const BUILD_TIMEOUT = 240_000;

describe.skipIf(!hasCargo)('build from source with cargo', () => {
  it(
    'builds a crate without artifacts into bin/, records its digest, and the server passes doctor',
    async () => {
      const r = await runCli(['install', 'built', '--allow-build'], { env: env(), timeoutMs: BUILD_TIMEOUT });
      expect(r.code, r.stderr).toBe(0);
      // The summary says so before anything runs; cargo's own lines stream on stderr.
      expect(r.stdout.indexOf('BUILT FROM SOURCE')).toBeGreaterThanOrEqual(0);
      expect(r.stdout.indexOf('BUILT FROM SOURCE')).toBeLessThan(r.stdout.indexOf('Installed built'));
      expect(r.stderr).toMatch(/cargo: .*Compiling yolop-extension-built v0\.1\.0/);
      expect(r.stdout).not.toContain('cannot be found yet');
      const bin = join(pkgDir('built'), 'bin', 'built-server');
      expect(statSync(bin).mode & 0o777).toBe(0o755);
      const digest = sha(readFileSync(bin));
      expect(lockSource('built')).toMatchObject({ binary_source: 'cargo', binary_sha256: digest, binary_file_sha256: digest, binary_target: hostTarget() });
      expect(lockSource('built').binary_digest_source).toBeUndefined();
      // cargo never wrote into the package: the crate's files plus the one binary.
      expect(files(pkgDir('built'))).toEqual([...files(SOURCE), join('bin', 'built-server')].sort());
      expect(jsonOf(await runCli(['list', '--json'], { env: env() })).extensions[0].problems).toEqual([]);
      const doctor = await runCli(['doctor', 'built', '--json'], { env: env() });
      expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
      expect(JSON.stringify(jsonOf(doctor))).toContain('ping');
    },
    BUILD_TIMEOUT,
  );

  it('--no-build leaves it package-only with guidance', async () => {
    const r = await runCli(['install', 'built', '--no-build'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/not built from source \(--no-build\).*`yep-ext install --force --allow-build built`/);
    expect(r.stdout).toContain('cannot be found yet');
    expect(r.stderr).not.toContain('cargo:');
    expect(existsSync(join(pkgDir('built'), 'bin'))).toBe(false);
    expect(lockSource('built').binary_source).toBeUndefined();
  });

  it.skipIf(!hostTarget())(
    'prefers a verified prebuilt; --build builds over it',
    async () => {
      const pre = await runCli(['install', 'builtpre'], { env: env() });
      expect(pre.code, pre.stderr).toBe(0);
      expect(lockSource('builtpre')).toMatchObject({ binary_source: 'prebuilt', binary_digest_source: 'crate', binary_sha256: sha(PREBUILT) });
      expect(pre.stderr).not.toContain('cargo:');
      home.cleanup();
      home = makeTempHome();
      reg.requests.length = 0;
      const built = await runCli(['install', 'builtpre', '--build'], { env: env(), timeoutMs: BUILD_TIMEOUT });
      expect(built.code, built.stderr).toBe(0);
      expect(reg.requestsTo('/pre/')).toEqual([]);
      const bin = join(pkgDir('builtpre'), 'bin', 'built-server');
      expect(readFileSync(bin)).not.toEqual(PREBUILT);
      expect(lockSource('builtpre')).toMatchObject({ binary_source: 'cargo', binary_sha256: sha(readFileSync(bin)) });
    },
    BUILD_TIMEOUT,
  );

  it(
    'update builds the new version after consent, and says so in its plan',
    async () => {
      const crate = 'yolop-extension-builtup';
      publishBuilt('builtup');
      expect((await runCli(['install', 'builtup', '--no-build'], { env: env() })).code).toBe(0);
      expect(existsSync(join(pkgDir('builtup'), 'bin'))).toBe(false);
      const tree = readTree(SOURCE);
      const text = (rel: string) => Buffer.from(tree[rel]!.content).toString('utf8').replaceAll('yolop-extension-built', crate).replaceAll('0.1.0', '0.2.0');
      const plugin = JSON.parse(text('plugin.json'));
      plugin.name = 'builtup';
      reg.publish({
        name: crate,
        vers: '0.2.0',
        data: buildCrate({
          name: crate,
          version: '0.2.0',
          files: { ...tree, 'Cargo.toml': text('Cargo.toml'), 'Cargo.lock': text('Cargo.lock'), 'plugin.json': JSON.stringify(plugin) },
        }),
      });
      const r = await runCli(['update', 'builtup', '--allow-build'], { env: env(), timeoutMs: BUILD_TIMEOUT });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('will be BUILT FROM SOURCE');
      const bin = join(pkgDir('builtup'), 'bin', 'built-server');
      expect(lockSource('builtup')).toMatchObject({ version: '0.2.0', binary_source: 'cargo', binary_sha256: sha(readFileSync(bin)) });
    },
    BUILD_TIMEOUT,
  );

  it(
    "a build script that leaves a daemon in cargo's process group: a successful build leaves nothing of it running",
    async () => {
      const r = await runCli(['install', 'daemon', '--allow-build'], { env: env(), timeoutMs: BUILD_TIMEOUT });
      expect(r.code, r.stderr).toBe(0);
      expect(lockSource('daemon')).toMatchObject({ binary_source: 'cargo' });
      // The daemon was started (the build script ran) ...
      const pid = Number(readFileSync(join(daemonDir, 'pid'), 'utf8').trim());
      expect(pid).toBeGreaterThan(1);
      // ... and is gone: no /proc entry, or a zombie nobody has reaped yet (it runs nothing).
      const alive = (): boolean => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          return !/^\S+ \(.*\) [ZX] /.test(stat);
        } catch {
          return false;
        }
      };
      const deadline = Date.now() + 2000;
      while (alive() && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
      const survived = alive();
      if (survived) process.kill(pid, 'SIGKILL');
      expect(survived, `the build script's daemon (pid ${pid}) outlived the build`).toBe(false);
    },
    BUILD_TIMEOUT,
  );

  it(
    'without cargo on PATH, or when the crate does not compile, the package is installed with a note',
    async () => {
      const noCargo = await runCli(['install', 'built'], { env: env({ PATH: join(home.root, 'empty-path') }) });
      expect(noCargo.code, noCargo.stderr).toBe(0);
      expect(noCargo.stdout).toMatch(/cargo is not on PATH: install Rust/);
      expect(existsSync(join(pkgDir('built'), 'bin'))).toBe(false);
      const broken = await runCli(['install', 'broken', '--allow-build'], { env: env(), timeoutMs: BUILD_TIMEOUT });
      expect(broken.code, broken.stderr).toBe(0);
      expect(broken.stdout).toMatch(/building built-server from source failed \(cargo exited with 101\)/);
      expect(existsSync(join(pkgDir('broken'), 'bin'))).toBe(false);
      expect(lockSource('broken').binary_source).toBeUndefined();
    },
    BUILD_TIMEOUT,
  );
});
