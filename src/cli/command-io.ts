/**
 * What a command body needs from the runner around it: where lines go, whether
 * --json is on, and the run's Context. The oclif commands (BaseCommand.io) and
 * the oclif-free runner (fast-net-run.ts) each provide one, so a command's body
 * (install-run.ts, update-run.ts) is one function both call, never a copy.
 */
import type { Context } from '../core/context.js';
import type { CooldownOptions } from '../core/sources/crates-io/cooldown-options.js';

export interface ContextRequest {
  index?: string | undefined;
  /** --min-age / --allow-fresh: the release-age cooldown the context carries from the start. */
  cooldown?: CooldownOptions | undefined;
  yes?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  /** --git-mirror. */
  gitMirror?: string | undefined;
  /** --build / --no-build. */
  build?: boolean | undefined;
  /** --allow-build. */
  allowBuild?: boolean | undefined;
  /** Asks a yes/no question at the terminal (used only when the run may prompt). */
  confirm?: ((question: string) => Promise<boolean>) | undefined;
  /** --timeout as typed (parsed, and refused when it is not a duration, in cli-context.ts). */
  timeout?: string | undefined;
}

export interface CommandIo {
  /** --json: results are the returned value; log and logToStderr print nothing. */
  json: boolean;
  /** A result line on stdout (clears the live progress display first). Nothing with --json. */
  log(message: string): void;
  /** A message line on stderr (clears the live progress display first). Nothing with --json. */
  logToStderr(message: string): void;
  /** The Context of this run (src/cli/cli-context.ts). */
  makeContext(options: ContextRequest): Context;
}
