/**
 * Starts the server `yep-ext doctor <dir>` is about to check before the CLI loads
 * doctor's code: doctor is a Node process that starts a server, often itself a
 * Node process, and in series their two start-ups were most of its time. The
 * doctor command runs this with its parsed arguments, then loads doctor's code
 * while the server starts.
 *
 * This guesses, cheaply, the spawn doctor will make; it is not what makes it
 * right. Doctor adopts the server only when its own spawn, built from the checked
 * manifest, config and command, is exactly this one (early-server.ts), and kills
 * and reaps it otherwise. So every guess here only has to be usually right, and
 * it declines (returns undefined, having started nothing) when the answer is
 * probably "no spawn" or "another spawn": --call (a third exchange), an installed
 * name (its directory needs the store), a bad --timeout, a
 * plugin.json that does not parse, names no command, has a name the host refuses or
 * contributes nothing (doctor starts nothing for a manifest it rejects), a command that does not
 * resolve, a test's spawn seam, and config that may be injected (an env-mapped
 * field while settings.toml, connections.toml or the keychain index names the
 * extension).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { readRegularFileSync, readRegularTextSync } from '../core/fs/read-regular-file.js';
import { parseDoctorTarget } from '../core/doctor/target.js';
import { inspectServerCommand, runsInsidePackage } from '../core/package/inspect-command.js';
import { contributes } from '../core/package/manifest-rules.js';
import { isValidName } from '../core/package/names.js';
import { resolvePaths } from '../core/paths.js';
import { EarlyServerSet } from '../core/yep/early-server.js';
import type { CliIo } from './cli-io.js';
import type { Parsed } from './command.js';
import { parseDoctorTimeout } from './doctor-outcome.js';
import type { DoctorFlags } from './doctor-run.js';
import { testSeams } from './test-seams.js';

/** The manifest cap of package/manifest.ts (not imported: that module loads the schema library, which this early start must not wait for); doctor's own read reports a larger one. */
const MANIFEST_MAX_BYTES = 1024 * 1024;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** True when a file config or secrets could come from mentions `name` (or cannot be read but exists). */
function configOnRecord(env: CliIo['env'], name: string): boolean {
  const paths = resolvePaths(env);
  for (const file of [paths.settingsFile, paths.secretsFile, join(paths.storeDir, '.yep-keychain.json')]) {
    let text: string | undefined;
    try {
      // The one regular-file reader: a FIFO here is refused at once (and doctor then says so), never waited on.
      text = readRegularFileSync(file, 'The file')?.toString('latin1');
    } catch {
      return true;
    }
    if (text?.includes(name)) return true;
  }
  return false;
}

/** The server started for this doctor run, or undefined (nothing started). Never throws. */
export async function startEarlyDoctorServer(io: CliIo, { args, flags }: Parsed<DoctorFlags, { target: string }>): Promise<EarlyServerSet | undefined> {
  try {
    const { env, cwd } = io;
    if (flags.call !== undefined || testSeams(io)?.spawn) return undefined;
    parseDoctorTimeout(flags.timeout);
    const target = parseDoctorTarget(args.target, cwd, env.HOME);
    // A directory target (doctor's own kind, not a source kind), told by its shape.
    if (!('dir' in target) || !statSync(target.dir).isDirectory()) return undefined;
    // Through the regular-file guard like every manifest read: a FIFO or device plugin.json
    // throws here (nothing started), and doctor's own read refuses it with its message.
    const text = readRegularTextSync(join(target.dir, 'plugin.json'), 'The manifest', { followSymlinks: false, maxBytes: MANIFEST_MAX_BYTES });
    if (text === undefined) return undefined;
    const raw: unknown = JSON.parse(text);
    const y = isObj(raw) && isObj(raw.yolop) ? raw.yolop : undefined;
    // A manifest doctor (and the host) rejects starts nothing: its name and that it contributes
    // something are checked here as the manifest rules check them; doctor's own check is the rest.
    if (!isObj(raw) || typeof raw.name !== 'string' || !isValidName(raw.name) || !y || !contributes(y)) return undefined;
    const server = y && isObj(y.capabilityServer) ? y.capabilityServer : undefined;
    const serverArgs = server?.args ?? [];
    if (!server || typeof server.command !== 'string' || !Array.isArray(serverArgs) || !serverArgs.every((x) => typeof x === 'string')) return undefined;
    const props = isObj(y!.config_schema) && isObj(y!.config_schema.properties) ? Object.values(y!.config_schema.properties) : [];
    const envMapped = props.some((p) => isObj(p) && typeof p.env === 'string');
    if (
      envMapped &&
      !flags['no-config'] &&
      (typeof (raw as Record<string, unknown>).name !== 'string' || configOnRecord(env, (raw as Record<string, string>).name!))
    )
      return undefined;
    const command = await inspectServerCommand(target.dir, server.command, env.PATH ?? '');
    // Only what the one guard (policy/package-code.ts) runs whatever the policy says: the package's own
    // program. Anything else (outside the package, not startable) waits for doctor, after that guard.
    if (!runsInsidePackage(command) || !command.ok) return undefined;
    // Both of doctor's runs (the second, stopped by EOF only, is started once the first is adopted).
    const early = EarlyServerSet.start(
      { command: command.path, args: serverArgs as string[], packageDir: target.dir, workspaceRoot: cwd, env, injectedEnv: {} },
      2,
    );
    // Test-only (a preload's seam): lets the tests find these processes.
    testSeams(io)?.earlyServer?.(early.pids);
    return early;
  } catch {
    return undefined;
  }
}
