import { defineCommand } from '../cli/command.js';
import { Args, Flags } from '../cli/flags.js';
import { DEFAULT_HANDSHAKE_TIMEOUT_MS } from '../core/doctor/defaults.js';

export default defineCommand({
  summary: "Start an extension's server and check it speaks YEP v1.",
  description: `Works on an installed extension (by name) or on a package directory (a path: the authoring loop; with no TARGET, the package you are in). Spawns the server the way yolop does, with the extension's configured secrets and env-mapped config, runs the handshake and a set of probes, stops it, and grades each step pass/warn/fail.

Exits 9 when any check fails (yolop's own doctor exits 0). Check names and fixes: docs/doctor.md.`,
  examples: [
    '<%= config.bin %> doctor lsp',
    '<%= config.bin %> doctor ./examples/echo-node',
    '<%= config.bin %> doctor ./my-ext --call echo --args \'{"text":"hi"}\'',
    '<%= config.bin %> doctor lsp --json',
  ],
  args: {
    target: Args.string({
      ignoreStdin: true,
      description: 'Installed extension name, or a package directory (./dir, /abs/dir); default: the directory you are in, when it holds plugin.json.',
    }),
  },
  flags: {
    timeout: Flags.string({ description: `Seconds to wait for the handshake (default ${DEFAULT_HANDSHAKE_TIMEOUT_MS / 1000}, like yolop).` }),
    'no-config': Flags.boolean({ description: 'Do not inject configured secrets and config (see what the server does without them).' }),
    call: Flags.string({ description: 'After the checks, call this tool once and show its streamed updates.' }),
    args: Flags.string({ description: 'JSON arguments for --call (default {}).', dependsOn: ['call'] }),
  },
  async run(io, given) {
    const target = given.args.target ?? (await import('../core/doctor/target.js')).defaultDoctorTarget(io.io.cwd);
    const parsed = { ...given, args: { ...given.args, target } };
    // The server starts first, so that its start-up overlaps the load of doctor's code
    // (doctor-early.ts); doctor adopts it only if it is exactly its own spawn.
    const early = await (await import('../cli/doctor-early.js')).startEarlyDoctorServer(io.io, parsed);
    return (await import('../cli/doctor-run.js')).doctorCommand(io, parsed, early);
  },
});
