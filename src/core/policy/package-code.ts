/**
 * The one guard in front of running a package's own code on this machine
 * (docs/binaries.md "Consent to build", docs/policy.md). Two things yep-ext runs
 * of a package: a cargo build of a crate (its build scripts and compiler plugins
 * run while it compiles) and the package's server (doctor starts it). Every road
 * to either asks here first: install, update, `install --frozen` and
 * `install --force` reach the build only through operations/prepare.ts, which
 * holds a RunPermit from this guard; doctor spawns only after it.
 *
 * A build needs this run's consent: the explicit opt-in (--allow-build, or
 * --build) or a yes from the person at the terminal to a question that says the
 * crate's code will run. `--yes` is not that consent (scripts pass it to approve
 * replacements and grants). The policy file can forbid builds outright. A server
 * (the capability server, or a stdio MCP server the package contributes) runs
 * when doctor is asked to run it, resolved by the one resolver
 * (package/inspect-command.ts) to the program doctor then starts, unless that
 * program is not the package's and the policy's `server_outside_package` forbids
 * that. A capability server named by a path outside the package is never started
 * either: the host starts it from the package, so such a path is the package
 * reaching out. An MCP server is started by the host from the user's environment by
 * design (`npx`, `uvx`, an absolute interpreter), so there only the policy refuses.
 */
import type { Context } from '../context.js';
import { YepError } from '../errors.js';
import type { RunPermit } from '../binary/cargo-build.js';
import { runsInsidePackage, type CommandInspection } from '../package/inspect-command.js';
import { policyError, serverOutsideViolation, type PolicyViolation } from './evaluate.js';
import { loadPolicy } from './load-policy.js';
import type { Policy } from './policy-file.js';

export type PackageCode =
  | {
      kind: 'build';
      /** The extension's name. */
      name: string;
      /** What is built, for the question (`crates.io:yolop-extension-lsp@0.3.0`). */
      what: string;
      /** The command that builds it later, with consent. */
      later: string;
    }
  | {
      kind: 'server';
      name: string;
      /** The key in `mcpServers` for a stdio MCP server; absent for the capability server. */
      mcpServer?: string;
      /** The command as written (`capabilityServer.command`, or the MCP server's). */
      command: string;
      /** Where it resolves (inspect-command.ts, the one resolver); a command that cannot start is never run. */
      resolved: CommandInspection;
    };

export type CodeVerdict =
  /** Go ahead: the permit is what the build runner takes. */
  | { run: true; permit: RunPermit }
  /** Planning only: the person at the terminal will be asked when it is time. */
  | { run: false; ask: true }
  /** Not run: why, in words for a note or a failed check. */
  | { run: false; ask?: false; why: string; violation?: PolicyViolation };

const SERVER_PERMIT: RunPermit = { kind: 'server', reason: 'doctor was asked to run it' };

/** The phase of the question: `plan` never prompts (it says what will happen); `run` may prompt. */
export type CodePhase = 'plan' | 'run';

function buildRefusal(policy: Policy): PolicyViolation | undefined {
  if (policy.build_from_source) return undefined;
  return {
    rule: 'binaries.build_from_source',
    item: 'cargo build',
    message: "building a server from source runs the crate's build scripts and compiler plugins on this machine; the policy forbids it",
    file: policy.build_from_source_file ?? policy.files.join(' + '),
  };
}

/**
 * May yep-ext run this package code now? `policy`: the one the operation loaded (read
 * here otherwise). Throws E_POLICY only where the user asked by name for what the
 * policy forbids (--build, --allow-build); otherwise a refusal is a verdict, and the
 * caller carries on without running it.
 */
export async function mayRunPackageCode(ctx: Context, code: PackageCode, phase: CodePhase, given?: Policy): Promise<CodeVerdict> {
  if (code.kind === 'server') {
    // The package's own program: no rule below refuses it (doctor's early start relies on this), so no policy file is read for it.
    if (runsInsidePackage(code.resolved)) return { run: true, permit: SERVER_PERMIT };
  }
  const policy = given ?? loadPolicy(ctx);
  if (code.kind === 'server') {
    const outside = code.resolved.outside;
    // Hardening: a capability server named by a path outside the package is reported, never started by yep-ext.
    if (code.mcpServer === undefined && outside && (outside.via === 'absolute' || outside.via === 'climbs'))
      return { run: false, why: `${code.resolved.detail}; yep-ext does not start a program named by a path outside the package` };
    const violation =
      outside &&
      serverOutsideViolation(policy, { command: code.command, how: outside.how, ...(code.mcpServer !== undefined ? { mcpServer: code.mcpServer } : {}) });
    if (violation) return { run: false, why: `not started: refused by the policy in ${violation.file} (${violation.rule}): ${violation.message}`, violation };
    if (!code.resolved.ok) return { run: false, why: code.resolved.detail };
    return { run: true, permit: SERVER_PERMIT };
  }
  const consent = ctx.packageCode;
  const violation = buildRefusal(policy);
  if (violation) {
    // Asked for by name and forbidden: the run stops (exit 13) before anything is placed.
    if (consent.allowBuild && consent.build !== 'never') throw policyError([{ ...violation, message: `${code.name}: ${violation.message}` }], policy);
    return {
      run: false,
      why: `not built from source: the policy file ${violation.file} forbids it (binaries.build_from_source = false); the package is installed without its server`,
      violation,
    };
  }
  if (consent.build === 'never')
    return { run: false, why: `not built from source (--no-build): the package is installed without its server; build it with \`${code.later}\`` };
  if (consent.allowBuild) return { run: true, permit: { kind: 'build', reason: consent.build === 'force' ? '--build' : '--allow-build' } };
  if (!consent.confirm)
    return {
      run: false,
      why: `not built from source: building ${code.what} runs its build scripts and compiler plugins on this machine, and this run has no consent to that (no terminal to ask; --yes does not consent to running code); the package is installed without its server. Build it with \`${code.later}\``,
    };
  if (phase === 'plan') return { run: false, ask: true };
  const yes = await consent.confirm(
    `${code.name}: no prebuilt server binary fits this machine. Build ${code.what} from source with cargo? Its build scripts and compiler plugins will run on this machine, with your permissions.`,
  );
  if (ctx.signal.aborted) throw new YepError('E_INTERRUPTED', 'Interrupted.');
  return yes
    ? { run: true, permit: { kind: 'build', reason: 'you said yes' } }
    : { run: false, why: `not built from source (you said no): the package is installed without its server; build it with \`${code.later}\`` };
}
