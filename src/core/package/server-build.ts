/**
 * "This package's server is not built yet, and this is the command that builds it."
 * A local package is referenced in place, so a source tree whose build output is
 * missing installs, enables and lists fine and only fails when yolop starts it. The
 * two build systems yep-ext scaffolds are recognised from their own files, the way
 * their users know them:
 * - cargo: a Cargo.toml, and the bare server command not in bin/ (the scaffold's
 *   step copies the release binary there);
 * - npm: a package.json with a `build` script whose `main` file is missing (the
 *   TypeScript scaffold's launcher in bin/ loads `main`).
 * Anything else is not guessed at: the command check reports it as it is.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readRegularTextSync } from '../fs/read-regular-file.js';

/** A server that is not built: the command to run in `dir`, and why we think so. */
export interface UnbuiltServer {
  dir: string;
  /** Run in `dir` (a POSIX shell line). */
  step: string;
  /** `(cd <dir> && <step>)`, ready to paste. */
  command: string;
  /** The missing file that says so, relative to `dir`. */
  missing: string;
}

const PACKAGE_JSON_MAX = 1024 * 1024;

/** The build of an npm package whose dependencies are not installed yet. */
export const NPM_BUILD_STEP = 'npm install && npm run build';

/** Build a cargo package's release binary and put it where the host looks first (bin/). */
export function cargoBuildStep(command: string): string {
  return `cargo build --release && cp target/release/${command} bin/`;
}

function shellWord(text: string): string {
  return /^[A-Za-z0-9_./~:@%+=-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

function unbuilt(dir: string, step: string, missing: string): UnbuiltServer {
  return { dir, step, command: `(cd ${shellWord(dir)} && ${step})`, missing };
}

/** npm: the `main` a `build` script produces, when it is missing. */
function npmUnbuilt(dir: string): UnbuiltServer | undefined {
  let pkg: { main?: unknown; scripts?: { build?: unknown } };
  try {
    const text = readRegularTextSync(join(dir, 'package.json'), 'package.json', { maxBytes: PACKAGE_JSON_MAX });
    if (text === undefined) return undefined;
    pkg = JSON.parse(text) as typeof pkg;
  } catch {
    return undefined;
  }
  if (typeof pkg?.main !== 'string' || typeof pkg.scripts?.build !== 'string') return undefined;
  if (existsSync(join(dir, pkg.main))) return undefined;
  const step = existsSync(join(dir, 'node_modules')) ? 'npm run build' : NPM_BUILD_STEP;
  return unbuilt(dir, step, pkg.main);
}

/** cargo: the server command, bare, not yet copied into bin/. */
function cargoUnbuilt(dir: string, command: string): UnbuiltServer | undefined {
  if (command.includes('/') || !existsSync(join(dir, 'Cargo.toml'))) return undefined;
  if (existsSync(join(dir, 'bin', command))) return undefined;
  return unbuilt(dir, cargoBuildStep(command), `bin/${command}`);
}

/** The build a local package still needs before its server can start, if we can tell. */
export function unbuiltServer(dir: string, command: string): UnbuiltServer | undefined {
  return cargoUnbuilt(dir, command) ?? npmUnbuilt(dir);
}
