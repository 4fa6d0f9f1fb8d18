/**
 * An oclif-free runner for the plain shapes of `yep-ext doctor` (the authoring
 * loop runs it after every edit; issue 20): loading and configuring oclif cost
 * more CPU than the doctor's own work on a small server. Bundled on its own as
 * dist/bundle/fast-doctor.cjs (scripts/build-cli.mjs), which bin/run.js loads
 * for `doctor …` only.
 *
 * Like the `list` runner (fast-path.ts) it is honest by construction: it takes
 * only `doctor <target>` with at most one each of --json, --no-config,
 * --timeout <seconds>, and one of -q/--quiet and --verbose, in an environment
 * where oclif would print nothing of its own. Anything else (--call, --args,
 * help, `--flag=value`, `--`, an installed name that is not installed, whose
 * error oclif's path decorates with a "did you mean") returns false having done
 * nothing, and oclif runs as usual. Everything between the arguments and the
 * output is the command's own code: the same Context (cli-context.ts), the same
 * runDoctor, renderer, timeout parsing and failure error (doctor-outcome.ts),
 * the same error report and exit statuses. test/cli/fast-doctor.test.ts runs
 * passing and failing servers both ways and compares the bytes.
 */
import { existsSync } from 'node:fs';
import { doctorConfigLoader } from '../core/doctor/doctor-config.js';
import type { EarlyServers } from '../core/yep/early-server.js';
import { parseFastDoctorArgs } from './fast-doctor-args.js';
import { parseDoctorTarget, runDoctor } from '../core/doctor/doctor.js';
import { YepError } from '../core/errors.js';
import { resolvePaths } from '../core/paths.js';
import { packageDir } from '../core/paths.js';
import { resolveExtensionName } from '../core/store/installed-name.js';
import { makeCliContext } from './cli-context.js';
import { doctorFailedError, parseDoctorTimeout } from './doctor-outcome.js';
import { oclifWouldDiffer, writeStdout } from './fast-path-env.js';
import { renderDoctorReport } from './render-doctor.js';
import { writeError } from './report-error.js';
import { clearStatus } from './status-area.js';
import { testSeams } from './test-seams.js';

/**
 * False for an installed-extension name that is not installed: oclif's path adds
 * a "did you mean" to that error (BaseCommand.withNameSuggestion). Paths, bad
 * names (the same E_USAGE either way) and installed names are ours.
 */
function answerable(target: string): boolean {
  const parsed = (() => {
    try {
      return parseDoctorTarget(target, process.cwd(), process.env.HOME);
    } catch {
      return undefined;
    }
  })();
  // A directory (doctor's own target kind, not a source kind) needs no lookup.
  if (parsed === undefined || 'dir' in parsed) return true;
  const paths = resolvePaths(process.env);
  return existsSync(packageDir(paths, resolveExtensionName(paths, parsed.raw ?? parsed.name)));
}

/**
 * Run `argv` (process.argv.slice(2)) without oclif if it is a doctor shape we
 * handle. Returns false, having done nothing, when the caller must run oclif.
 */
export async function runFastDoctor(argv: string[], early?: EarlyServers): Promise<boolean> {
  if (argv[0] !== 'doctor') return false;
  const a = parseFastDoctorArgs(argv.slice(1));
  if (!a || oclifWouldDiffer(process.env, a.json) || !answerable(a.target)) return false;
  // Test-only (a preload's seam): lets the differential test prove this path ran.
  testSeams()?.fastPath?.('doctor');
  let code = 0;
  try {
    const timeoutMs = parseDoctorTimeout(a.timeout);
    const ctx = makeCliContext({ json: a.json, abort: new AbortController(), quiet: a.quiet, verbose: a.verbose });
    // A Ctrl-C while the early servers started and this code loaded (doctor-early.ts): they
    // are killed; stop as doctor does for a Ctrl-C during its run.
    if (early?.interrupted) {
      await early.discard();
      throw new YepError('E_INTERRUPTED', 'Interrupted: the server was stopped.');
    }
    const report = await runDoctor(ctx, {
      target: parseDoctorTarget(a.target, process.cwd(), process.env.HOME),
      workspaceRoot: process.cwd(),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      noConfig: a.noConfig,
      ...(a.noConfig ? {} : { loadConfig: doctorConfigLoader(ctx) }),
      ...(early ? { earlyServer: early } : {}),
    });
    // oclif prints through console.log(util.format(text)): text + newline, after
    // clearing the progress line (BaseCommand.log).
    clearStatus();
    writeStdout(`${a.json ? JSON.stringify(report, null, 2) : renderDoctorReport(report, process.stdout)}\n`);
    if (!report.ok) {
      if (a.json) code = 9;
      else throw await doctorFailedError(report);
    }
  } catch (e) {
    code = writeError(e, a.json);
  }
  // runDoctor has adopted or discarded it; not when it was never reached (a bad --timeout).
  await early?.discard();
  // oclif leaves a failed command through process.exit (its `handle`); so do we.
  if (code !== 0) process.exit(code);
  return true;
}
