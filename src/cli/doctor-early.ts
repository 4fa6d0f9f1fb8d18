/**
 * Starts the server `yep-ext doctor <dir>` is about to check before the CLI loads
 * doctor's code (issue 20): doctor is a Node process that starts a server, often
 * itself a Node process, and in series their two start-ups were most of its time.
 * bin/run.js runs this from a small bundle of its own (dist/bundle/doctor-early.cjs)
 * and then loads fast-doctor.cjs while the server starts.
 *
 * This guesses, cheaply, the spawn doctor will make; it is not what makes it
 * right. Doctor adopts the server only when its own spawn, built from the checked
 * manifest, config and command, is exactly this one (early-server.ts), and kills
 * and reaps it otherwise. So every guess here only has to be usually right, and
 * it declines (returns undefined, having started nothing) when the answer is
 * probably "no spawn" or "another spawn": a shape the oclif-free runner does not
 * take, an installed name (its directory needs the store), a bad --timeout, a
 * plugin.json that does not parse or names no command, a command that does not
 * resolve, a test's spawn seam, and config that may be injected (an env-mapped
 * field while settings.toml, connections.toml or the keychain index names the
 * extension).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { readRegularFileSync, readRegularTextSync } from '../core/fs/read-regular-file.js';
import { parseDoctorTarget } from '../core/doctor/target.js';
import { inspectServerCommand } from '../core/package/inspect-command.js';
import { resolvePaths } from '../core/paths.js';
import { EarlyServerSet } from '../core/yep/early-server.js';
import { parseDoctorTimeout } from './doctor-outcome.js';
import { parseFastDoctorArgs } from './fast-doctor-args.js';
import { oclifWouldDiffer } from './fast-path-env.js';
import { testSeams } from './test-seams.js';

/** The manifest cap of package/manifest.ts (not imported: this bundle stays small); doctor's own read reports a larger one. */
const MANIFEST_MAX_BYTES = 1024 * 1024;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** True when a file config or secrets could come from mentions `name` (or cannot be read but exists). */
function configOnRecord(name: string): boolean {
  const paths = resolvePaths(process.env);
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

/** The server started for `argv`'s doctor run, or undefined (nothing started). Never throws. */
export async function startEarlyDoctorServer(argv: string[]): Promise<EarlyServerSet | undefined> {
  try {
    if (argv[0] !== 'doctor') return undefined;
    const a = parseFastDoctorArgs(argv.slice(1));
    if (!a || oclifWouldDiffer(process.env, a.json) || testSeams()?.spawn) return undefined;
    parseDoctorTimeout(a.timeout);
    const target = parseDoctorTarget(a.target, process.cwd(), process.env.HOME);
    // A directory target (doctor's own kind, not a source kind), told by its shape as fast-doctor does.
    if (!('dir' in target) || !statSync(target.dir).isDirectory()) return undefined;
    // Through the regular-file guard like every manifest read: a FIFO or device plugin.json
    // throws here (nothing started), and doctor's own read refuses it with its message.
    const text = readRegularTextSync(join(target.dir, 'plugin.json'), 'The manifest', { followSymlinks: false, maxBytes: MANIFEST_MAX_BYTES });
    if (text === undefined) return undefined;
    const raw: unknown = JSON.parse(text);
    const y = isObj(raw) && isObj(raw.yolop) ? raw.yolop : undefined;
    const server = y && isObj(y.capabilityServer) ? y.capabilityServer : undefined;
    const args = server?.args ?? [];
    if (!server || typeof server.command !== 'string' || !Array.isArray(args) || !args.every((x) => typeof x === 'string')) return undefined;
    const props = isObj(y!.config_schema) && isObj(y!.config_schema.properties) ? Object.values(y!.config_schema.properties) : [];
    const envMapped = props.some((p) => isObj(p) && typeof p.env === 'string');
    if (envMapped && !a.noConfig && (typeof (raw as Record<string, unknown>).name !== 'string' || configOnRecord((raw as Record<string, string>).name!)))
      return undefined;
    const command = await inspectServerCommand(target.dir, server.command, process.env.PATH ?? '');
    // A program outside the package may be refused (the policy file, or never started: package-code.ts):
    // only doctor itself, after that guard, starts it.
    if (!command.ok || command.where === 'outside') return undefined;
    // Both of doctor's runs (the second, stopped by EOF only, is started once the first is adopted).
    const early = EarlyServerSet.start(
      { command: command.path, args: args as string[], packageDir: target.dir, workspaceRoot: process.cwd(), env: process.env, injectedEnv: {} },
      2,
    );
    // Test-only (a preload's seam): lets the tests find these processes.
    testSeams()?.earlyServer?.(early.pids);
    return early;
  } catch {
    return undefined;
  }
}
