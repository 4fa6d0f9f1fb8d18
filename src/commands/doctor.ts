import { Args, Flags } from '@oclif/core';
import { BaseCommand, feedbackFlags } from '../cli/base-command.js';
import { renderDoctorReport } from '../cli/render-doctor.js';
import { dim } from '../cli/style.js';
import { doctorConfigLoader } from '../core/doctor/doctor-config.js';
import { DEFAULT_HANDSHAKE_TIMEOUT_MS, parseDoctorTarget, runDoctor } from '../core/doctor/doctor.js';
import { YepError } from '../core/errors.js';
import { doctorFailedError, parseDoctorTimeout } from '../cli/doctor-outcome.js';
import { sanitize } from '../core/text/sanitize.js';

export default class Doctor extends BaseCommand {
  static override summary = "Start an extension's server and check that it speaks YEP v1 correctly.";
  static override description =
    `Works on an installed extension (by name) or on a package directory (a path: the authoring loop). Spawns the server the way yolop does, with the extension's configured secrets and env-mapped config, runs the handshake and a set of probes, stops it, and grades each step pass/warn/fail.

Exits 9 when any check fails (yolop's own doctor exits 0). Check names and fixes: docs/doctor.md.`;

  static override examples = [
    '<%= config.bin %> doctor lsp',
    '<%= config.bin %> doctor ./examples/echo-node',
    '<%= config.bin %> doctor ./my-ext --call echo --args \'{"text":"hi"}\'',
    '<%= config.bin %> doctor lsp --json',
  ];

  static override args = {
    target: Args.string({ ignoreStdin: true, required: true, description: 'Installed extension name, or a package directory (./dir, /abs/dir).' }),
  };

  static override flags = {
    ...feedbackFlags,
    timeout: Flags.string({ description: `Seconds to wait for the handshake (default ${DEFAULT_HANDSHAKE_TIMEOUT_MS / 1000}, like yolop).` }),
    'no-config': Flags.boolean({ description: 'Do not inject configured secrets and config (see what the server does without them).' }),
    call: Flags.string({ description: 'After the checks, call this tool once and show its streamed updates.' }),
    args: Flags.string({ description: 'JSON arguments for --call (default {}).', dependsOn: ['call'] }),
  };

  async run(): Promise<unknown> {
    const { args, flags } = await this.parse(Doctor);
    const timeoutMs = parseDoctorTimeout(flags.timeout);
    const call = flags.call === undefined ? undefined : { tool: flags.call, args: parseArgs(flags.args) };
    const ctx = this.makeContext({ quiet: flags.quiet, verbose: flags.verbose });
    const json = this.jsonEnabled();
    const report = await runDoctor(ctx, {
      target: parseDoctorTarget(args.target, process.cwd(), process.env.HOME),
      workspaceRoot: process.cwd(),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      noConfig: flags['no-config'],
      ...(flags['no-config'] ? {} : { loadConfig: doctorConfigLoader(ctx) }),
      ...(call ? { call } : {}),
      onUpdate: (output) => {
        if (!json) this.logToStderr(dim(`  update: ${sanitize(output, { max: 300 })}`, process.stderr));
      },
    });
    if (report.ok) {
      if (!json) this.log(renderDoctorReport(report, process.stdout));
      return report;
    }
    if (json) {
      // The report is the answer, failed or not: print it whole, then exit 9.
      this.logJson(report);
      return this.exit(9);
    }
    this.log(renderDoctorReport(report, process.stdout));
    throw await doctorFailedError(report);
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
