/**
 * Build from source (docs/binaries.md, step 2): when no prebuilt artifact fits
 * this host and `cargo` is on PATH, the verified crate is built with
 * `cargo install --locked --no-track --root <tmp> --path <copy of the crate>
 * --bin <command> --target-dir <tmp>` and the one binary is moved to
 * `<package>/bin/<command>`. The decision is pure (`decideBuild`); the runner
 * streams cargo's output through ctx.log, kills the whole process group on
 * timeout or Ctrl-C and again once cargo exits (a daemon a build script left in
 * the group; one that leaves the group with setsid is not caught), and never
 * lets cargo write into the package tree (the crate is copied first, so
 * Cargo.lock or target/ cannot appear in it).
 * Environment: YEP_EXT_BUILD_TIMEOUT_MS (default 20 min); cargo's own
 * variables pass through (CARGO_NET_OFFLINE=true builds offline).
 */
import { makeDirs } from '../fs/custody.js';
import { accessSync, constants, existsSync, renameSync, statSync } from 'node:fs';
import { chmod, cp } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import type { Context } from '../context.js';
import { YepError } from '../errors.js';
import { signalGroup } from '../yep/process-group.js';
import type { CargoFacts } from './binstall-meta.js';
import type { BinaryRecord } from './binary-record.js';
// Not from provision-binary.js (which re-exports both): that would load the
// provisioner and tar into every command that only asks for the build mode.
import { COMMAND_RE } from './command-name.js';
import { sha256File } from '../fs/file-digest.js';
import type { BinaryOutcome } from './provision-binary.js';
import { startStep } from '../log.js';

/** auto: build when no artifact fits; never: --no-build; force: --build (even over a prebuilt). */
export type BuildMode = 'auto' | 'never' | 'force';

/**
 * What the one guard in front of package code (policy/package-code.ts,
 * `mayRunPackageCode`) hands out when it lets code run: the build runner takes
 * nothing less, so no road reaches cargo without asking it.
 */
export interface RunPermit {
  readonly kind: 'build' | 'server';
  /** Why it may run: `--allow-build`, `--build`, `you said yes`, `doctor was asked to run it`. */
  readonly reason: string;
}

/** The command that builds `name`'s server later, with consent: fetched again exactly as locked, and built. */
export function buildLaterCommand(name: string): string {
  return `yep-ext install --force --allow-build ${name}`;
}

export interface BuildPlan {
  cargo: string;
  /** The verified, unpacked crate (never modified). */
  crateDir: string;
  command: string;
  target?: string;
}

const DEFAULT_TIMEOUT_MS = 20 * 60_000;

/** An executable regular file named `name` on PATH, or undefined. */
function findOnPath(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Does the crate at `dir` declare a binary target named `command` (cargo's target discovery)? */
export function hasBinTarget(dir: string, facts: CargoFacts, command: string): boolean {
  if (facts.bins.includes(command)) return true;
  if (!facts.autobins) return false;
  if (facts.crateName === command && existsSync(join(dir, 'src', 'main.rs'))) return true;
  return existsSync(join(dir, 'src', 'bin', `${command}.rs`)) || existsSync(join(dir, 'src', 'bin', command, 'main.rs'));
}

export type BuildDecision = { build: BuildPlan } | { note: string } | { skip: true };

/**
 * Decide whether to build. `prebuiltMissing` = no artifact fits this host (or none
 * was tried because of --build). Pure apart from the PATH lookup.
 */
export function decideBuild(input: {
  mode: BuildMode;
  prebuiltMissing: boolean;
  crateDir: string;
  facts: CargoFacts | undefined;
  command: string;
  env: Record<string, string | undefined>;
  isCrate: boolean;
  target?: string;
  /** The command that builds it later (buildLaterCommand). */
  later: string;
}): BuildDecision {
  const { mode, facts, command, crateDir } = input;
  if (mode === 'never' || (!input.prebuiltMissing && mode !== 'force')) {
    if (mode === 'never' && input.isCrate && facts && hasBinTarget(crateDir, facts, command)) {
      return {
        note: `not built from source (--no-build): the package is installed without its server; build it with \`${input.later}\`, or put ${command} on PATH`,
      };
    }
    return { skip: true };
  }
  if (!input.isCrate || !facts)
    return mode === 'force' ? { note: '--build applies to crates only: this source is not a crate with a Cargo.toml' } : { skip: true };
  if (!COMMAND_RE.test(command)) return { note: `not built from source: the command "${command}" is not a plain file name` };
  if (!hasBinTarget(crateDir, facts, command)) {
    return mode === 'force' ? { note: `cannot build from source: the crate has no binary target named ${command}` } : { skip: true };
  }
  const cargo = findOnPath('cargo', input.env.PATH);
  if (!cargo)
    return {
      note: `no prebuilt binary fits this host and cargo is not on PATH: install Rust (https://rustup.rs) and reinstall to build ${command}, or put it on PATH`,
    };
  return { build: { cargo, crateDir, command, ...(input.target ? { target: input.target } : {}) } };
}

function timeoutMs(env: Record<string, string | undefined>): number {
  const n = Number(env.YEP_EXT_BUILD_TIMEOUT_MS);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : DEFAULT_TIMEOUT_MS;
}

/**
 * Run the planned build in `workDir` (a fresh directory in staging) and place the
 * binary in `<pkgDir>/bin/`, with the permit of the one guard (`permit`). Failures
 * are notes; Ctrl-C throws E_INTERRUPTED.
 */
export async function runCargoBuild(ctx: Context, plan: BuildPlan, pkgDir: string, workDir: string, permit: RunPermit): Promise<BinaryOutcome> {
  if (permit.kind !== 'build') throw new Error('runCargoBuild needs a build permit from mayRunPackageCode');
  const src = join(workDir, 'src');
  const root = join(workDir, 'root');
  await makeDirs(workDir);
  // Into the fresh work directory this run made in staging: nothing there to replace or follow.
  await cp(plan.crateDir, src, { recursive: true, verbatimSymlinks: true });
  const args = ['install', '--locked', '--no-track', '--root', root, '--path', src, '--bin', plan.command, '--target-dir', join(workDir, 'target')];
  ctx.log.info(`Building ${plan.command} from source (${permit.reason}): cargo ${args.join(' ')}`);
  const limit = timeoutMs(ctx.env);
  const tail: string[] = [];
  const step = startStep(ctx.log, `Building ${plan.command} with cargo`, { deadlineAt: Date.now() + limit });
  const result = await new Promise<{ code: number | null; why?: string }>((resolve) => {
    const child = ctx.spawn(plan.cargo, args, { cwd: workDir, env: ctx.env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let why: string | undefined;
    const kill = (reason: string): void => {
      why ??= reason;
      if (child.pid) signalGroup(child.pid, 'SIGKILL');
    };
    const cancelTimer = ctx.clock.timeout(() => kill(`timed out after ${Math.round(limit / 1000)} s (YEP_EXT_BUILD_TIMEOUT_MS)`), limit);
    const onAbort = (): void => kill('interrupted');
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const lines = (chunk: Buffer, rest: { s: string }): void => {
      rest.s += chunk.toString('utf8');
      for (let i = rest.s.indexOf('\n'); i !== -1; i = rest.s.indexOf('\n')) {
        const line = rest.s.slice(0, i).trimEnd();
        rest.s = rest.s.slice(i + 1);
        // cargo's "add <root>/bin to your PATH" is about its temporary root: not for the user.
        if (!line.trim() || /be sure to add .* to your PATH/.test(line)) continue;
        tail.push(line);
        if (tail.length > 12) tail.shift();
        ctx.log.info(`  cargo: ${line.trim()}`);
        step.update({ detail: line.trim().slice(0, 80) });
      }
    };
    const out = { s: '' };
    const err = { s: '' };
    // Both are pipes (stdio above).
    child.stdout!.on('data', (c: Buffer) => lines(c, out));
    child.stderr!.on('data', (c: Buffer) => lines(c, err));
    child.on('error', (e) => {
      why ??= e.message;
    });
    // cargo is gone, normally or not: whatever it left in its group (a build.rs that
    // started a daemon) goes too, and so do the pipes such a process may hold ('close' waits for them).
    child.on('exit', () => {
      if (child.pid) signalGroup(child.pid, 'SIGKILL');
    });
    child.on('close', (code) => {
      cancelTimer();
      step.end();
      ctx.signal.removeEventListener('abort', onAbort);
      resolve({ code, ...(why !== undefined ? { why } : {}) });
    });
  });
  if (ctx.signal.aborted) throw new YepError('E_INTERRUPTED', 'Interrupted while building from source.');
  if (result.code !== 0 || result.why) {
    const last = tail.slice(-5).join(' | ');
    return { note: `building ${plan.command} from source failed (${result.why ?? `cargo exited with ${result.code}`})${last ? `: ${last}` : ''}` };
  }
  const built = join(root, 'bin', plan.command);
  if (!existsSync(built)) return { note: `cargo finished but did not produce bin/${plan.command}` };
  const binDir = join(pkgDir, 'bin');
  await makeDirs(binDir, 0o755);
  const dest = join(binDir, plan.command);
  // Into the staged package tree (fetched, checked link-free; never a user's path install: prepare.ts).
  renameSync(built, dest);
  await chmod(dest, 0o755);
  const sha = await sha256File(dest);
  const record: BinaryRecord = { binary_sha256: sha, binary_file_sha256: sha, binary_source: 'cargo', ...(plan.target ? { binary_target: plan.target } : {}) };
  ctx.log.info(`Built bin/${plan.command} from source with cargo (sha256 ${sha.slice(0, 12)}…).`);
  return { record, path: dest };
}
