/**
 * Building from source runs the crate's code, so it needs this run's consent
 * (docs/binaries.md "Consent to build"): a crate whose build script writes a
 * marker file is installed without its server, and the marker never appears,
 * without a terminal, with --yes, under `install --frozen` and through `update`;
 * the policy file can forbid builds (an explicit opt-in is then refused, exit 13,
 * nothing placed). The opt-in (--allow-build), the command the note names
 * (`install --force --allow-build <name>`), `install --frozen --allow-build` and a
 * yes at the terminal prompt run the build: the marker is there, and the lock
 * describes the built binary (verify passes). A no at the prompt builds nothing.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CARGO_TEST_ENV } from '../helpers/cargo-env.js';
import { buildCrate, FIXTURE_CRATES, readTree } from '../helpers/crates.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { driveCliInPty } from '../helpers/pty.js';
import { FAST_HTTP_ENV, startRegistry, type TestRegistry } from '../helpers/registry.js';

const cargoPath = spawnSync('sh', ['-c', 'command -v cargo'], { encoding: 'utf8' }).stdout.trim();
const hasCargo = cargoPath !== '' && spawnSync(cargoPath, ['--version']).status === 0;
if (!hasCargo && process.env.YEP_EXT_REQUIRE_ALL === '1') throw new Error('cargo is not on PATH: the build-consent tests need a Rust toolchain');
const hasScript = spawnSync('script', ['--version']).status === 0;

const CRATE = 'yolop-extension-marked';
const SOURCE = join(FIXTURE_CRATES, 'yolop-extension-built');
// The crate's own code, run by cargo while it builds: it leaves a marker where the test says.
const BUILD_RS =
  'fn main() {\n    if let Ok(p) = std::env::var("YEP_TEST_BUILD_MARKER") {\n        std::fs::write(p, "the build script ran\\n").unwrap();\n    }\n}\n';
const BUILD_TIMEOUT = 240_000;

let reg: TestRegistry;
let home: TempHome;
let marks: string;
let marker: string;

function publishMarked(version: string, extra: Record<string, { content: string; mode: number }> = {}, crate = CRATE): void {
  const tree = readTree(SOURCE);
  const text = (rel: string) =>
    Buffer.from(tree[rel]!.content).toString('utf8').replaceAll('yolop-extension-built', CRATE).replaceAll('version = "0.1.0"', `version = "${version}"`);
  const plugin = JSON.parse(text('plugin.json'));
  plugin.name = 'marked';
  plugin.version = version;
  const files = {
    ...tree,
    'Cargo.toml': text('Cargo.toml'),
    'Cargo.lock': text('Cargo.lock'),
    'plugin.json': JSON.stringify(plugin, null, 2),
    'build.rs': BUILD_RS,
    ...extra,
  };
  reg.publish({ name: crate, vers: version, data: buildCrate({ name: crate, version, files }) });
}

beforeAll(async () => {
  reg = await startRegistry();
  publishMarked('0.1.0');
  marks = mkdtempSync(join(tmpdir(), 'yep-build-marker-'));
});
afterAll(() => {
  reg.close();
  rmSync(marks, { recursive: true, force: true });
});
let n = 0;
beforeEach(() => {
  home = makeTempHome();
  marker = join(marks, `marker-${++n}`);
});
afterEach(() => home.cleanup());

const env = (h: TempHome = home, extra: Record<string, string> = {}) => ({
  ...h.env,
  ...FAST_HTTP_ENV,
  YEP_EXT_INDEX: reg.indexUrl,
  ...CARGO_TEST_ENV,
  YEP_TEST_BUILD_MARKER: marker,
  ...extra,
});
const pkgDir = (h: TempHome = home) => join(h.configDir, 'extensions', 'marked');
const lockFile = (h: TempHome = home) => join(h.configDir, 'extensions', 'extensions.lock');
type Entry = { name: string; version?: string; source: Record<string, unknown> };
const entry = (h: TempHome = home): Entry | undefined =>
  existsSync(lockFile(h)) ? (parse(readFileSync(lockFile(h), 'utf8')) as { extensions?: Entry[] }).extensions?.find((e) => e.name === 'marked') : undefined;
const serverBin = (h: TempHome = home) => join(pkgDir(h), 'bin', 'built-server');

/** Installed, pinned, and without its server: what an install without consent leaves. */
function expectPackageOnly(h: TempHome = home): void {
  expect(existsSync(join(pkgDir(h), 'plugin.json'))).toBe(true);
  expect(existsSync(serverBin(h))).toBe(false);
  expect(entry(h)?.source.binary_source).toBeUndefined();
  expect(entry(h)?.source.binary_sha256).toBeUndefined();
}

/** Built here with consent: the binary is placed and the lock describes it, so verify finds the tree as locked. */
async function expectBuilt(h: TempHome = home): Promise<void> {
  expect(readFileSync(marker, 'utf8')).toBe('the build script ran\n');
  expect(existsSync(serverBin(h))).toBe(true);
  expect(entry(h)?.source).toMatchObject({ binary_source: 'cargo' });
  const verify = await runCli(['verify', '--json'], { env: env(h) });
  expect(verify.code, verify.stdout + verify.stderr).toBe(0);
}

describe.skipIf(!hasCargo)("a build from source runs only with this run's consent", () => {
  it('without a terminal, and with --yes: no build (the marker is absent), installed package-only, and the note names the command that builds it', async () => {
    for (const args of [
      ['install', 'marked'],
      ['install', 'marked', '--yes'],
      ['install', '--force', '--yes', 'marked'],
    ]) {
      const h = args.includes('--force') ? home : makeTempHome();
      try {
        const r = await runCli(args, { env: env(h), timeoutMs: BUILD_TIMEOUT });
        expect(r.code, r.stderr).toBe(0);
        expect(existsSync(marker), `${args.join(' ')}: the build script ran`).toBe(false);
        expectPackageOnly(h);
        expect(r.stderr).not.toContain('cargo:');
        expect(r.stdout).toContain('`yep-ext install --force --allow-build marked`');
        if (h === home) continue;
        // The same home for `--force`: installed there package-only first.
        if (args.includes('--yes')) expect((await runCli(['install', 'marked', '--no-build'], { env: env() })).code).toBe(0);
      } finally {
        if (h !== home) h.cleanup();
      }
    }
  });

  it(
    'install --frozen in a fresh home never builds without --allow-build; with it, it builds',
    async () => {
      expect((await runCli(['install', 'marked', '--no-build'], { env: env() })).code).toBe(0);
      const lock = join(home.root, 'project.lock');
      copyFileSync(lockFile(), lock);
      const ci = makeTempHome();
      try {
        const r = await runCli(['install', '--frozen', '--lockfile', lock], { env: env(ci), timeoutMs: BUILD_TIMEOUT });
        expect(r.code, r.stderr).toBe(0);
        expect(existsSync(marker)).toBe(false);
        expectPackageOnly(ci);
        const built = await runCli(['install', '--force', '--allow-build', 'marked'], { env: env(ci), timeoutMs: BUILD_TIMEOUT });
        expect(built.code, built.stderr).toBe(0);
        await expectBuilt(ci);
      } finally {
        ci.cleanup();
      }
      const fresh = makeTempHome();
      try {
        rmSync(marker, { force: true });
        const r = await runCli(['install', '--frozen', '--lockfile', lock, '--allow-build'], { env: env(fresh), timeoutMs: BUILD_TIMEOUT });
        expect(r.code, r.stderr).toBe(0);
        await expectBuilt(fresh);
      } finally {
        fresh.cleanup();
      }
    },
    2 * BUILD_TIMEOUT,
  );

  it('update to a version that needs a build: without consent (--yes given) no build, the new version installed package-only', async () => {
    const crateHome = home;
    expect((await runCli(['install', 'marked', '--no-build'], { env: env() })).code).toBe(0);
    // Published for the rest of this file too: the later installs take 0.2.0, which builds the same way.
    publishMarked('0.2.0');
    const r = await runCli(['update', 'marked', '--yes'], { env: env(crateHome), timeoutMs: BUILD_TIMEOUT });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(marker)).toBe(false);
    expect(entry()?.version).toBe('0.2.0');
    expectPackageOnly();
    expect(r.stdout).toContain('`yep-ext install --force --allow-build marked`');
  });

  it('a package that ships a bin/<command> that is not executable: --allow-build builds nothing and the shipped file stays as published', async () => {
    const shipped = { content: '#!/bin/sh\n# placeholder the author forgot to mark executable\n', mode: 0o644 };
    publishMarked('0.1.0', { 'bin/built-server': shipped }, 'yolop-extension-shipsbin');
    const r = await runCli(['install', 'shipsbin', '--allow-build', '--json'], { env: env(), timeoutMs: BUILD_TIMEOUT });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(marker), 'the build script ran').toBe(false);
    const file = join(home.configDir, 'extensions', 'marked', 'bin', 'built-server');
    expect(readFileSync(file, 'utf8')).toBe(shipped.content);
    expect(statSync(file).mode & 0o777).toBe(0o644);
    expect(entry()?.source.binary_source).toBeUndefined();
    expect(jsonOf(r).installed[0].notes.join('\n')).toMatch(
      /bin\/built-server is not executable .*: not replacing the package's own file with a download or a build/,
    );
  });

  it('the policy file forbids builds: --allow-build is refused (exit 13, nothing placed); without it the package is installed package-only', async () => {
    writeFileSync(home.env.YEP_EXT_POLICY!, '[binaries]\nbuild_from_source = false\n');
    const refused = await runCli(['install', 'marked', '--allow-build', '--json'], { env: env(), timeoutMs: BUILD_TIMEOUT });
    expect(refused.code, refused.stdout + refused.stderr).toBe(13);
    expect(jsonOf(refused).error.details.rule).toBe('binaries.build_from_source');
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(pkgDir())).toBe(false);
    expect(entry()).toBeUndefined();
    const plain = await runCli(['install', 'marked', '--json'], { env: env(), timeoutMs: BUILD_TIMEOUT });
    expect(plain.code, plain.stderr).toBe(0);
    expect(existsSync(marker)).toBe(false);
    expectPackageOnly();
    expect(jsonOf(plain).installed[0].notes.join('\n')).toContain('binaries.build_from_source = false');
  });
});

/** Run the CLI in a terminal (helpers/pty.ts), answering the first line matching `question` with `answer`. */
function inPty(args: string[], runEnv: Record<string, string>, question: RegExp, answer: string): Promise<{ code: number | null; output: string }> {
  // A wide terminal: the question is one line to match.
  return driveCliInPty(args, [[question, answer]], { env: runEnv, cols: 400, timeoutMs: BUILD_TIMEOUT });
}

describe.skipIf(!hasCargo || !hasScript)('at a terminal, the question says the code will run, and the answer decides', () => {
  it(
    'no: nothing built (no marker), installed package-only; yes: built',
    async () => {
      const question = /Its build scripts and compiler plugins will run on this machine/;
      const no = await inPty(['install', 'marked'], env(), question, 'n\r');
      expect(no.code, no.output).toBe(0);
      expect(no.output).toMatch(question);
      expect(existsSync(marker)).toBe(false);
      expectPackageOnly();
      const yes = await inPty(['install', '--force', 'marked'], env(), question, 'y\r');
      expect(yes.code, yes.output).toBe(0);
      await expectBuilt();
    },
    2 * BUILD_TIMEOUT,
  );
});
