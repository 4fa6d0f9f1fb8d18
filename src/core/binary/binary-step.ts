/**
 * The binary step of the install pipeline, as two calls with a small
 * interface for operations/prepare.ts:
 *   prepareBinary  before the contribution summary: a prebuilt artifact is
 *                  downloaded and verified now (nothing runs), or a cargo
 *                  build is planned (and said in the summary);
 *   finishBinary   while committing, with the permit of the one guard in
 *                  front of package code (policy/package-code.ts): runs the
 *                  planned build.
 * Order (docs/binaries.md): prebuilt artifact -> cargo build -> package-only.
 */
import type { Context } from '../context.js';
import { isYepError } from '../errors.js';
import { readCargoToml } from '../sources/crates-io/cargo-manifest.js';
import type { Manifest } from '../package/manifest.js';
import { cargoFacts, type CargoFacts } from './binstall-meta.js';
import { buildLaterCommand, decideBuild, hasBinTarget, runCargoBuild, type BuildPlan, type RunPermit } from './cargo-build.js';
import { provisionBinary, type BinaryOutcome } from './provision-binary.js';
import { hostTarget } from './target.js';
import type { CommandInspection } from '../package/inspect-command.js';

export type { RunPermit } from './cargo-build.js';

export interface BinaryStep {
  /** The prebuilt attempt (undefined when none was made). `refused` marks integrity failures. */
  outcome?: BinaryOutcome;
  /** A build to run, once the guard lets it (policy/package-code.ts). */
  build?: BuildPlan;
  /** How the build is consented to, as planned: given (--allow-build, --build), or to be asked at the terminal. */
  consent?: 'given' | 'ask';
  /** Why a possible build was not planned (no consent, --no-build, the policy file): said in the plan. */
  withheld?: string;
  /** Notes for the user (why the package is or may stay without its server). */
  notes: string[];
}

/** Facts from `<dir>/Cargo.toml`, or undefined when there is none (or it is not a small regular file). */
async function readCargoFacts(dir: string): Promise<CargoFacts | undefined> {
  let text: string | undefined;
  try {
    text = readCargoToml(dir);
  } catch (e) {
    // Not a small regular file (a FIFO, a link, too big): no facts, as for a missing one.
    if (isYepError(e)) return undefined;
    throw e;
  }
  return text === undefined ? undefined : cargoFacts(text);
}

/**
 * Called when the server command does not resolve in a fetched (crate or git)
 * tree (`command`: the resolver's finding). `buildable` (the source kind's say:
 * crates) decides whether a build is possible.
 */
export async function prepareBinary(
  ctx: Context,
  dir: string,
  manifest: Manifest,
  command: CommandInspection & { ok: false },
  buildable: boolean,
): Promise<BinaryStep> {
  const mode = ctx.packageCode.build;
  const server = manifest.yolop.capabilityServer;
  // What the package itself holds in bin/ is never replaced by a download or a build, whichever would provide the server.
  if (command.shipped) {
    // One the system refuses to run where it lies (a noexec mount): a download or a build would land on the same
    // mount, and the resolver's detail already says why and what to do. A refused program elsewhere (on PATH)
    // does not stop yep-ext from providing the package's own.
    if (command.refused) return { notes: [] };
    return {
      notes: [
        `${command.detail}: not replacing the package's own file with a download or a build (its author can fix it, or drop it so yep-ext provides the server)`,
      ],
    };
  }
  const facts = await readCargoFacts(dir);
  const notes: string[] = [];
  let outcome: BinaryOutcome | undefined;
  const declaresArtifact = server.binaries !== undefined || facts?.binstall !== undefined;
  // --build skips the prebuilt only when there is something to build.
  const canBuild = buildable && facts !== undefined && hasBinTarget(dir, facts, server.command);
  if (declaresArtifact && !(mode === 'force' && canBuild)) {
    outcome = await provisionBinary(ctx, dir, manifest, facts ? { cargo: facts } : {});
    if (outcome.record) return { outcome, notes };
  }
  const target = hostTarget();
  const decision = decideBuild({
    mode,
    prebuiltMissing: outcome === undefined || outcome.unavailable === true,
    crateDir: dir,
    facts,
    command: server.command,
    env: ctx.env,
    isCrate: buildable,
    ...(target ? { target } : {}),
    later: buildLaterCommand(manifest.name),
  });
  if (outcome?.note && !('build' in decision)) notes.push(outcome.note);
  if ('note' in decision) notes.push(decision.note);
  if ('build' in decision) {
    if (outcome?.note) ctx.log.info(outcome.note.replace(/^no prebuilt binary(?: installed)?: /, 'No prebuilt binary: '));
    return { ...(outcome ? { outcome } : {}), build: decision.build, notes };
  }
  return { ...(outcome ? { outcome } : {}), notes };
}

/** Run the planned build with the guard's permit. `workDir` is a fresh directory in staging. */
export async function finishBinary(ctx: Context, step: BinaryStep, pkgDir: string, workDir: string, permit: RunPermit): Promise<BinaryOutcome | undefined> {
  if (!step.build) return undefined;
  const outcome = await runCargoBuild(ctx, step.build, pkgDir, workDir, permit);
  delete step.build;
  if (outcome.note) step.notes.push(outcome.note);
  return outcome;
}
