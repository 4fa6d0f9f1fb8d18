/**
 * The one resolver of `capabilityServer.command`, used by install (to say when
 * the server cannot start yet, and whether to fetch a prebuilt binary), verify,
 * the policy file's `server_outside_package` rule and doctor's spawn. It finds
 * the program the host would start (host-compat §7, docs/formats.md "The server
 * command"): a command with a `/` is that file, absolute or relative to the
 * package directory (`..` allowed, as the host allows it); a bare name is
 * `<package>/bin/<name>`, else the first directory of the inherited PATH that
 * holds a file of that name. Then it says where that program is (in the
 * package, or outside it and how), and clearly why it would not start: missing,
 * a directory, a dangling symlink, not executable, built for another machine, a
 * `#!` interpreter that is not there. Never runs anything.
 */
import { accessSync, constants, lstatSync, readlinkSync, realpathSync, type Stats, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import { errnoCode } from '../errors.js';
import { isFileKindRefusal, readRegularFileSync } from '../fs/read-regular-file.js';

/**
 * How a resolved program lies outside the package: named by an absolute path, by a
 * relative one that climbs out (`../../bin/sh`), reached through a symlink in the
 * package that leads out, or found on PATH (a bare name the package's bin/ lacks).
 */
interface OutsidePackage {
  via: 'absolute' | 'climbs' | 'symlink' | 'PATH';
  /** The program that would run (its real path for a symlink). */
  target: string;
  /** The same in words, for messages ("a symlink bin/srv -> /usr/bin/sh out of the package"). */
  how: string;
}

export type CommandInspection =
  | {
      ok: true;
      /** Absolute path of the program to spawn (what the host resolves the command to). */
      path: string;
      /** 'outside': the program is not in the package (see `outside`). */
      where: 'package-bin' | 'package' | 'outside';
      /** Set when where is 'outside'. */
      outside?: OutsidePackage;
      detail: string;
      /** Works, but not the way it should (shown as a warning). */
      warning?: string;
    }
  | {
      ok: false;
      detail: string;
      /** The command names a place outside the package (a path), even though nothing runs there now. */
      outside?: OutsidePackage;
    };

/**
 * What install, repair and "already installed" report about the server command: where it
 * was found, in the package's own terms (`bin/echo-node (executable)`) and never as an
 * absolute path, which for a fresh install would name the staging directory it was
 * inspected in (removed by then), not the store.
 */
export function commandFinding(c: CommandInspection): { found: boolean; detail: string } {
  return c.ok ? { found: true, detail: c.warning ? `${c.detail} (${c.warning})` : c.detail } : { found: false, detail: c.detail };
}

const inside = (root: string, p: string): boolean => {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
};

/**
 * Why `file` cannot be executed, or undefined when it can. Synchronous calls, as in
 * formatProblem: each is one cheap syscall on a path already in the kernel's cache, and
 * an inspection makes a dozen or more of them (the package's bin/, the #! interpreter,
 * PATH's directories), one after the other. Through libuv's pool each cost a round trip
 * of two thread hand-offs: a warm `install --frozen` of 20 entries, which inspects every
 * server, was ~400 such round trips, most of its run spent idle (docs/performance.md,
 * round nine).
 */
function executableProblem(file: string, shown: string): string | undefined {
  let l: Stats;
  try {
    l = lstatSync(file);
  } catch (e) {
    return errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR' ? 'missing' : `cannot be read (${errnoCode(e) ?? String(e)})`;
  }
  let s: Stats;
  try {
    s = statSync(file);
  } catch {
    let target = '?';
    if (l.isSymbolicLink()) {
      try {
        target = readlinkSync(file);
      } catch {
        target = '?';
      }
    }
    return `${shown} is a dangling symlink (-> ${target})`;
  }
  if (s.isDirectory()) return `${shown} is a directory, not a program`;
  if (!s.isFile()) return `${shown} is not a regular file`;
  try {
    accessSync(file, constants.X_OK);
  } catch {
    return `${shown} is not executable (run \`chmod +x ${shown}\`)`;
  }
  return undefined;
}

const ELF_MACHINES: Record<number, string> = {
  3: 'ia32',
  40: 'arm',
  62: 'x64',
  183: 'arm64',
  243: 'riscv64',
  8: 'mips',
  21: 'ppc64',
  22: 's390x',
};

/** Problems visible in the first bytes: wrong architecture, foreign format, a missing interpreter. */
function formatProblem(file: string, shown: string, searchPath: string[]): { problem?: string; warning?: string } {
  let head: Buffer;
  try {
    // Through the regular-file guard: a FIFO swapped in after executableProblem's stat is refused, never read.
    const got = readRegularFileSync(file, 'The server command', { head: 256 });
    if (!got) return {};
    head = got;
  } catch (e) {
    if (isFileKindRefusal(e)) return { problem: `${shown} is not a regular file` };
    return {};
  }
  if (head.length >= 20 && head[0] === 0x7f && head.toString('latin1', 1, 4) === 'ELF') {
    if (process.platform !== 'linux' && process.platform !== 'freebsd') return { problem: `${shown} is a Linux (ELF) executable; this is ${process.platform}` };
    const machine = head[5] === 2 ? head.readUInt16BE(18) : head.readUInt16LE(18);
    const arch = ELF_MACHINES[machine];
    if (arch !== process.arch) return { problem: `${shown} is built for ${arch ?? `machine 0x${machine.toString(16)}`}; this machine is ${process.arch}` };
    return {};
  }
  const magic = head.length >= 4 ? head.readUInt32BE(0) : 0;
  if ([0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe].includes(magic) && process.platform !== 'darwin') {
    return { problem: `${shown} is a macOS (Mach-O) executable; this is ${process.platform}` };
  }
  if (head.length >= 2 && head.toString('latin1', 0, 2) === 'MZ' && process.platform !== 'win32') {
    return { problem: `${shown} is a Windows executable; this is ${process.platform}` };
  }
  if (head.toString('latin1', 0, 2) === '#!') {
    const line = head.toString('utf8').split('\n')[0]!.slice(2).trim();
    const [interp, ...rest] = line.split(/\s+/);
    if (!interp) return { problem: `${shown} has an empty #! line` };
    if (executableProblem(interp, interp) !== undefined) return { problem: `${shown} needs the interpreter ${interp}, which is not there or not executable` };
    if (interp.endsWith('/env')) {
      const prog = rest.find((a) => !a.startsWith('-'));
      if (prog && !prog.includes('=') && !findOnPath(prog, searchPath))
        return { problem: `${shown} runs \`${prog}\` (#!${line}), which is not on the server's PATH` };
    }
    return {};
  }
  return { warning: `${shown} has no #! line and is not a known binary format: it would run as a /bin/sh script` };
}

/**
 * Where a program in the package really is when a symlink takes it out of the package
 * (`bin/srv -> /usr/bin/python3`, a `bin -> /usr/bin` directory link): a path install may hold
 * such links (crates and git trees may not: tree-scan.ts), and the content hash skips them, so
 * what runs is neither shipped in the package nor pinned by its hash. Undefined when it stays inside.
 */
function leavesPackage(pkgReal: string, file: string): string | undefined {
  let real: string;
  try {
    real = realpathSync.native(file);
  } catch {
    return undefined;
  }
  return inside(pkgReal, real) ? undefined : real;
}

function findOnPath(name: string, dirs: string[]): string | undefined {
  for (const dir of dirs) {
    const candidate = join(dir, name);
    if (executableProblem(candidate, candidate) === undefined) return candidate;
  }
  return undefined;
}

/** A regular file (symlinks followed), as the host's `is_file` asks. */
function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Problems of a resolved program that would keep it from starting, or its warning. */
function startProblem(file: string, shown: string, searchPath: string[]): { problem?: string; warning?: string } {
  const problem = executableProblem(file, shown);
  if (problem) return { problem: problem === 'missing' ? `${shown} does not exist` : problem };
  return formatProblem(file, shown, searchPath);
}

/**
 * Resolve `command` for a package at `packageDir` as the host does, with
 * `inheritedPath` the PATH the server inherits (before `<package>/bin` is prepended).
 */
export async function inspectServerCommand(packageDir: string, command: string, inheritedPath: string): Promise<CommandInspection> {
  if (command.trim() === '') return { ok: false, detail: 'capabilityServer.command is empty' };
  if (command.includes('\0')) return { ok: false, detail: 'capabilityServer.command contains a NUL byte' };
  let pkgReal: string;
  try {
    // The native realpath(3), as fs/promises' realpath is (not the JS walk of realpathSync).
    pkgReal = realpathSync.native(packageDir);
  } catch {
    pkgReal = resolve(packageDir);
  }
  const bin = join(pkgReal, 'bin');
  // Empty PATH entries mean "the current directory" to execvp: never search those.
  const searchPath = [bin, ...inheritedPath.split(delimiter).filter((d) => d !== '' && isAbsolute(d))];
  const shownCmd = JSON.stringify(command);

  if (command.includes('/')) {
    // The host's rule: the file itself, absolute or relative to the package directory (no containment check).
    const file = isAbsolute(command) ? normalize(command) : resolve(pkgReal, command);
    // Inside the package as named or as resolved (an owned store entry is a symlink to its version directory).
    const named = inside(pkgReal, file) || inside(resolve(packageDir), file);
    const outside: OutsidePackage | undefined = named
      ? undefined
      : isAbsolute(command)
        ? { via: 'absolute', target: file, how: `the absolute path ${file}, outside the package` }
        : { via: 'climbs', target: file, how: `${command} climbs out of the package to ${file}` };
    const shown = named ? relative(pkgReal, file) || file : file;
    const { problem, warning } = startProblem(file, shown, searchPath);
    if (problem) {
      const detail = outside ? `command ${shownCmd} names ${outside.how}, and ${problem.replace(`${shown} `, 'it ')}` : problem;
      return { ok: false, detail, ...(outside ? { outside } : {}) };
    }
    if (outside)
      return {
        ok: true,
        path: file,
        where: 'outside',
        outside,
        detail: `command ${shownCmd} runs ${outside.how} (not shipped in the package, not covered by its content hash)`,
        warning: [warning, 'ship the server in bin/ and name it without a path'].filter(Boolean).join('; '),
      };
    const real = leavesPackage(pkgReal, file);
    if (real) {
      const link: OutsidePackage = { via: 'symlink', target: real, how: `a symlink ${shown} -> ${real} out of the package` };
      return {
        ok: true,
        path: file,
        where: 'outside',
        outside: link,
        detail: `${shown} is a symlink to ${real}, outside the package (not shipped in it, not covered by its content hash)`,
        ...(warning ? { warning } : {}),
      };
    }
    // Hosts that resolve the command before spawning (resolve_server_command) start this file;
    // older ones, and the host's own doctor, run argv[0] relative to the workspace, where it is not.
    const relativeNote = isAbsolute(command)
      ? undefined
      : `a command with "/" starts only on hosts that resolve it from the package; name it \`${command.split('/').pop()}\` and keep it in bin/ to start everywhere`;
    const warnings = [warning, relativeNote].filter((w): w is string => w !== undefined);
    return { ok: true, path: file, where: 'package', detail: `${shown} in the package`, ...(warnings.length ? { warning: warnings.join('; ') } : {}) };
  }

  const inBin = join(bin, command);
  const binProblem = executableProblem(inBin, `bin/${command}`);
  if (binProblem === undefined) {
    const fmt = formatProblem(inBin, `bin/${command}`, searchPath);
    if (fmt.problem) return { ok: false, detail: fmt.problem };
    const real = leavesPackage(pkgReal, inBin);
    if (real)
      return {
        ok: true,
        path: inBin,
        where: 'outside',
        outside: { via: 'symlink', target: real, how: `a symlink bin/${command} -> ${real} out of the package` },
        detail: `bin/${command} is a symlink to ${real}, outside the package (not shipped in it, not covered by its content hash)`,
        ...(fmt.warning ? { warning: fmt.warning } : {}),
      };
    return { ok: true, path: inBin, where: 'package-bin', detail: `bin/${command} (executable)`, ...(fmt.warning ? { warning: fmt.warning } : {}) };
  }
  // Something named like the command in bin/ that cannot run is the author's bug, even if PATH has another.
  if (binProblem !== 'missing') return { ok: false, detail: binProblem };
  // The host takes the first PATH directory holding a file of that name, executable or not.
  const found = searchPath
    .slice(1)
    .map((d) => join(d, command))
    .find(isFile);
  if (!found) return { ok: false, detail: `${shownCmd} is neither in the package's bin/ nor on PATH` };
  const outside: OutsidePackage = { via: 'PATH', target: found, how: `${found}, found on PATH` };
  const { problem, warning } = startProblem(found, found, searchPath);
  if (problem) return { ok: false, detail: `${command} resolves on PATH to ${found}, which cannot start: ${problem}`, outside };
  return {
    ok: true,
    path: found,
    where: 'outside',
    outside,
    detail: `${command} found on PATH at ${found} (not shipped in the package)`,
    ...(warning ? { warning } : {}),
  };
}
