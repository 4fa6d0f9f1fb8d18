/** The body of `yep-ext doctor` (src/commands/doctor.ts). */
import { doctorConfigLoader } from '../core/doctor/doctor-config.js';
import { parseDoctorTarget, runDoctor } from '../core/doctor/doctor.js';
import { YepError } from '../core/errors.js';
import { sanitize } from '../core/text/sanitize.js';
import type { EarlyServers } from '../core/yep/early-server.js';
import { ExitStatus, type CommandIo, type Parsed } from './command.js';
import { doctorFailedError, parseDoctorTimeout } from './doctor-outcome.js';
import { renderDoctorReport } from './render-doctor.js';
import { dim } from './style.js';

export interface DoctorFlags {
  timeout?: string | undefined;
  'no-config': boolean;
  quiet?: boolean | undefined;
  call?: string | undefined;
  args?: string | undefined;
}

export async function doctorCommand(io: CommandIo, { args, flags }: Parsed<DoctorFlags, { target: string }>, early?: EarlyServers): Promise<unknown> {
  const { env, cwd, stdout, stderr } = io.io;
  try {
    const timeoutMs = parseDoctorTimeout(flags.timeout);
    const call = flags.call === undefined ? undefined : { tool: flags.call, args: parseArgs(flags.args) };
    const ctx = io.context();
    // A Ctrl-C while the early servers started and this code loaded: they are killed;
    // stop as doctor does for a Ctrl-C during its run.
    if (early?.interrupted) throw new YepError('E_INTERRUPTED', 'Interrupted: the server was stopped.');
    const report = await runDoctor(ctx, {
      target: parseDoctorTarget(args.target, cwd, env.HOME),
      workspaceRoot: cwd,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      noConfig: flags['no-config'],
      ...(flags['no-config'] ? {} : { loadConfig: doctorConfigLoader(ctx) }),
      ...(call ? { call } : {}),
      ...(early ? { earlyServer: early } : {}),
      onUpdate: (output) => {
        if (!io.json) io.logToStderr(dim(`  update: ${sanitize(output, { max: 300 })}`, stderr));
      },
    });
    if (report.ok) {
      if (!io.json) io.log(renderDoctorReport(report, stdout, flags.quiet === true));
      return report;
    }
    if (io.json) {
      // The report is the answer, failed or not: print it whole, then exit 9.
      io.logJson(report);
      throw new ExitStatus(9);
    }
    io.log(renderDoctorReport(report, stdout, flags.quiet === true));
    throw await doctorFailedError(report);
  } finally {
    // runDoctor has adopted or discarded them; not when it was never reached (a bad --timeout).
    await early?.discard();
  }
}

function parseArgs(text: string | undefined): unknown {
  if (text === undefined) return {};
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new YepError('E_USAGE', `--args is not valid JSON: ${(e as Error).message}`, { hint: `For example --args '{"text":"hi"}'.` });
  }
}
