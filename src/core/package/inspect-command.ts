/**
 * The one resolver of a server command a package names: `capabilityServer.command`
 * (the capability server) and the `command` of each stdio server in `mcpServers`.
 * Used by install (to say when the server cannot start yet, and whether to fetch a
 * prebuilt binary), verify, enable, the policy file's `server_outside_package` rule
 * and doctor's spawns (the capability server and each MCP server: doctor starts the
 * path resolved here, nothing else). It finds the program the host would start:
 *
 * - a capability server (host-compat §7, docs/formats.md "The server command"): a
 *   command with a `/` is that file, absolute or relative to the package directory
 *   (`..` allowed, as the host allows it); a bare name is `<package>/bin/<name>`, else
 *   the first directory of the inherited PATH that holds a file of that name;
 * - an MCP server the package contributes (host-compat §2, `contributed_mcp_servers`):
 *   the host hands it to its MCP client as declared, which spawns it from the workspace
 *   with the user's PATH (the server's own `env` PATH when it sets one) and no
 *   `<package>/bin`: an absolute command is that file, a relative one with a `/` is
 *   relative to the workspace, and a bare name is looked up on that PATH only.
 *
 * Then it says where that program is (in the package, or outside it and how), and
 * clearly why it would not start and what to do: missing, a directory, a dangling
 * symlink, not executable, built for another machine, a `#!` line naming an
 * interpreter that is not there (or a relative one). A bare name the package's `bin/`
 * lacks is outside the package whether or not PATH has it now: the host looks it up
 * on PATH when it starts the server. Never runs anything.
 */
import { accessSync, constants, lstatSync, readlinkSync, realpathSync, type Stats, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, normalize, relative, resolve } from 'node:path';
import { errnoCode } from '../errors.js';
import { describeRefusal, execRefusal, type ExecRefusal } from '../fs/exec-refused.js';
import { isFileKindRefusal, readRegularFileSync } from '../fs/read-regular-file.js';
import { isInside as inside } from '../fs/path-inside.js';

/**
 * How a resolved program lies outside the package: named by an absolute path, by a
 * relative one that climbs out (`../../bin/sh`), reached through a symlink in the
 * package that leads out, or found on PATH (a bare name the package's bin/ lacks).
 */
interface OutsidePackage {
  /** `workspace`: an MCP server's relative command, which the host runs relative to the workspace. */
  via: 'absolute' | 'climbs' | 'symlink' | 'PATH' | 'workspace';
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
      /**
       * The package's own bin/ holds a file of the command's name that cannot start: the
       * author's, which a prebuilt download or a build must not replace (binary/binary-step.ts).
       */
      shipped?: true;
      /**
       * The program's mode lets it run but the system refuses to (a noexec mount): the file is
       * intact, so fetching or placing it again cannot help (store/entry-check.ts needsRefetch).
       */
      refused?: ExecRefusal;
    };

/**
 * The program is the package's own (in it, as named and as resolved) and can start: the one
 * guard in front of package code (policy/package-code.ts) runs such a server whatever the
 * policy says, and doctor's early start (cli/doctor-early.ts) starts nothing else.
 */
export function runsInsidePackage(c: CommandInspection): boolean {
  return c.ok && c.where !== 'outside' && c.outside === undefined;
}

/**
 * What install, repair and "already installed" report about the server command: where it
 * was found, in the package's own terms (`bin/echo-node (executable)`) and never as an
 * absolute path, which for a fresh install would name the staging directory it was
 * inspected in (removed by then), not the store.
 */
export function commandFinding(c: CommandInspection): { found: boolean; detail: string } {
  return c.ok ? { found: true, detail: c.warning ? `${c.detail} (${c.warning})` : c.detail } : { found: false, detail: c.detail };
}

/**
 * Why `file` cannot be executed, or undefined when it can. Synchronous calls, as in
 * formatProblem: each is one cheap syscall on a path already in the kernel's cache, and
 * an inspection makes a dozen or more of them (the package's bin/, the #! interpreter,
 * PATH's directories), one after the other. Through libuv's pool each cost a round trip
 * of two thread hand-offs: a warm `install --frozen`, which inspects every server, would
 * spend most of its run idle between them.
 */
function executableProblem(file: string, shown: string): string | undefined {
  return execCheck(file, shown)?.problem;
}

/** executableProblem, and when the mode lets the file run but the system refuses to, that refusal (fs/exec-refused.ts). */
function execCheck(file: string, shown: string): { problem: string; refused?: ExecRefusal } | undefined {
  const problem = (text: string) => ({ problem: text });
  let l: Stats | undefined;
  try {
    // A missing file is the common answer (each PATH directory without the program): told
    // without an exception, whose construction costs more than the lstat.
    l = lstatSync(file, { throwIfNoEntry: false });
  } catch (e) {
    return problem(errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR' ? 'missing' : `cannot be read (${errnoCode(e) ?? String(e)})`);
  }
  if (!l) return problem('missing');
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
    return problem(`${shown} is a dangling symlink (-> ${target})`);
  }
  if (s.isDirectory()) return problem(`${shown} is a directory, not a program`);
  if (!s.isFile()) return problem(`${shown} is not a regular file`);
  try {
    accessSync(file, constants.X_OK);
  } catch (e) {
    // The execute bits are there and the system still says no (a noexec mount): chmod is not the fix.
    const refused = execRefusal(file, s, errnoCode(e));
    if (refused) return { problem: describeRefusal(shown, refused), refused };
    return problem(`${shown} is not executable (run \`chmod +x ${shown}\`)`);
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
function formatProblem(file: string, shown: string, searchPath: string[], check: ProgramCheck): { problem?: string; warning?: string } {
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
  if (head.toString('latin1', 0, 2) === '#!') return { ...shebangProblem(head, shown, searchPath, check) };
  return { warning: `${shown} has no #! line and is not a known binary format: it would run as a /bin/sh script` };
}

/**
 * What keeps a script's `#!` line from starting it, in words that say what is missing and
 * what to do. The kernel reads the line as written: the interpreter path is taken as is
 * (a relative one against the directory the server starts in, which is the workspace,
 * not the package), up to the end of the line (a Windows carriage return included).
 */
function shebangProblem(head: Buffer, shown: string, searchPath: string[], check: ProgramCheck): { problem?: string } {
  const raw = head.toString('utf8').split('\n')[0]!.slice(2);
  const line = raw.trim();
  const [interp, ...rest] = line.split(/\s+/);
  if (!interp) return { problem: `${shown} has an empty #! line: make its first line name the interpreter, such as #!/usr/bin/env node` };
  const name = interp.split('/').pop() || interp;
  if (raw.endsWith('\r'))
    return {
      problem: `${shown}'s #! line ends with a carriage return (Windows line endings), so the system looks for an interpreter whose name ends in "\\r": save ${shown} with LF line endings`,
    };
  if (!isAbsolute(interp))
    return {
      problem: `${shown} starts with #!${line}, a relative interpreter path: the system looks for ${interp} from the directory the server starts in (the workspace), not from the package; name it by its absolute path or through env (#!/usr/bin/env ${name})`,
    };
  const interpProblem = check(interp);
  if (interpProblem === 'missing')
    return {
      problem: `${shown} needs the interpreter ${interp} (its #! line), which is not on this machine: install ${name}, or start the script with #!/usr/bin/env ${name} so it is found on PATH`,
    };
  if (interpProblem !== undefined) return { problem: `${shown} needs the interpreter ${interp} (its #! line), but ${interpProblem}` };
  if (name === 'env') {
    const prog = rest.find((a) => !a.startsWith('-'));
    if (prog && !prog.includes('=') && !findOnPath(prog, searchPath, check))
      return {
        problem: `${shown} runs \`${prog}\` (#!${line}), which is not on the server's PATH: install ${prog}, or put the directory that holds it on PATH before yolop starts`,
      };
  }
  return {};
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

function findOnPath(name: string, dirs: string[], check: ProgramCheck): string | undefined {
  for (const dir of dirs) {
    const candidate = join(dir, name);
    if (check(candidate) === undefined) return candidate;
  }
  return undefined;
}

/** executableProblem of a file named by its own path (a #! interpreter, a PATH candidate). */
type ProgramCheck = (file: string) => string | undefined;

/**
 * The answers of executableProblem for files named by their own path, kept by a caller that
 * inspects many packages in one run (`list`, `verify`, a frozen install): fifty scripts that
 * start with `#!/usr/bin/env node` would otherwise check /usr/bin/env and every PATH
 * directory for `node` fifty times over.
 */
export type ProgramChecks = Map<string, string | undefined>;

/** Files in the package are checked afresh each time: only what lies outside it is shared between packages. */
function programCheck(pkgReal: string, known: ProgramChecks | undefined): ProgramCheck {
  return (file) => {
    if (!known || inside(pkgReal, file)) return executableProblem(file, file);
    if (!known.has(file)) known.set(file, executableProblem(file, file));
    return known.get(file);
  };
}

/** A regular file (symlinks followed), as the host's `is_file` asks. */
function isFile(p: string): boolean {
  try {
    return statSync(p, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}

/** Problems of a resolved program that would keep it from starting, or its warning. */
function startProblem(file: string, shown: string, searchPath: string[], check: ProgramCheck): { problem?: string; warning?: string; refused?: ExecRefusal } {
  const found = execCheck(file, shown);
  if (found) return found.problem === 'missing' ? { problem: `${shown} does not exist` } : found;
  return formatProblem(file, shown, searchPath, check);
}

/**
 * Which server the command starts, so which of the host's launch rules applies: the
 * capability server (the default), or a stdio MCP server the package contributes,
 * started from `cwd` (the workspace; unknown at install and enable, where a relative
 * command is judged by its shape alone).
 */
export type LaunchRule = { kind: 'capability' } | { kind: 'mcp'; server: string; cwd?: string };

/**
 * Resolve `command` for a package at `packageDir` as the host does, with
 * `inheritedPath` the PATH the server inherits (before `<package>/bin` is prepended,
 * for a capability server; as it is, for an MCP server).
 */
export async function inspectServerCommand(
  packageDir: string,
  command: string,
  inheritedPath: string,
  rule: LaunchRule = { kind: 'capability' },
  known?: ProgramChecks,
): Promise<CommandInspection> {
  const key = rule.kind === 'mcp' ? `mcpServers.${rule.server}.command` : 'capabilityServer.command';
  if (command.trim() === '') return { ok: false, detail: `${key} is empty` };
  if (command.includes('\0')) return { ok: false, detail: `${key} contains a NUL byte` };
  let pkgReal: string;
  try {
    // The native realpath(3), as fs/promises' realpath is (not the JS walk of realpathSync).
    pkgReal = realpathSync.native(packageDir);
  } catch {
    pkgReal = resolve(packageDir);
  }
  const check = programCheck(pkgReal, known);
  const bin = join(pkgReal, 'bin');
  // Empty PATH entries mean "the current directory" to execvp: never search those.
  const pathDirs = inheritedPath.split(delimiter).filter((d) => d !== '' && isAbsolute(d));
  if (rule.kind === 'mcp') return inspectMcpCommand(pkgReal, packageDir, command, pathDirs, rule.cwd, check);
  const searchPath = [bin, ...pathDirs];
  if (command.endsWith('/')) {
    // A trailing "/" asks for a directory: the host's is_file of `bin/srv/` fails (ENOTDIR) and it starts nothing.
    const named = inspectCommandPath(pkgReal, packageDir, command, searchPath, check);
    return {
      ok: false,
      detail: `${key} ${JSON.stringify(command)} ends with "/": it names a directory, not a program to start`,
      ...(named.outside ? { outside: named.outside } : {}),
    };
  }
  if (command.includes('/')) return inspectCommandPath(pkgReal, packageDir, command, searchPath, check);
  return inspectBareName(pkgReal, command, searchPath, check);
}

/** A command with a "/": the file itself, absolute or relative to the package directory. */
function inspectCommandPath(pkgReal: string, packageDir: string, command: string, searchPath: string[], check: ProgramCheck): CommandInspection {
  const shownCmd = JSON.stringify(command);
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
  const { problem, warning, refused } = startProblem(file, shown, searchPath, check);
  if (problem) {
    const detail = outside ? `command ${shownCmd} names ${outside.how}, and ${problem.replace(`${shown} `, 'it ')}` : problem;
    return { ok: false, detail, ...(outside ? { outside } : {}), ...(refused ? { refused } : {}) };
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

/** A bare command name: the package's bin/ first (where the host puts it on PATH), then PATH. */
function inspectBareName(pkgReal: string, command: string, searchPath: string[], check: ProgramCheck): CommandInspection {
  const bin = join(pkgReal, 'bin');
  const shownCmd = JSON.stringify(command);
  const inBin = join(bin, command);
  const binCheck = execCheck(inBin, `bin/${command}`);
  if (binCheck === undefined) {
    const fmt = formatProblem(inBin, `bin/${command}`, searchPath, check);
    if (fmt.problem) return { ok: false, detail: fmt.problem, shipped: true };
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
  if (binCheck.problem !== 'missing') return { ok: false, detail: binCheck.problem, shipped: true, ...(binCheck.refused ? { refused: binCheck.refused } : {}) };
  // The host takes the first PATH directory holding a file of that name, executable or not.
  const found = searchPath
    .slice(1)
    .map((d) => join(d, command))
    .find(isFile);
  if (!found)
    return {
      ok: false,
      detail: `${shownCmd} is neither in the package's bin/ nor on PATH: ship the server as bin/${command} in the package (executable), or install the program that provides ${command} so PATH finds it`,
      outside: notOnPath(`${command} is not in the package's bin/`),
    };
  const outside: OutsidePackage = { via: 'PATH', target: found, how: `${found}, found on PATH` };
  const { problem, warning, refused } = startProblem(found, found, searchPath, check);
  if (problem)
    return { ok: false, detail: `${command} resolves on PATH to ${found}, which cannot start: ${problem}`, outside, ...(refused ? { refused } : {}) };
  return {
    ok: true,
    path: found,
    where: 'outside',
    outside,
    detail: `${command} found on PATH at ${found} (not shipped in the package)`,
    ...(warning ? { warning } : {}),
  };
}

/**
 * A bare name nothing provides yet: the host looks it up on PATH when it starts the
 * server, so whatever runs then is outside the package (the policy's
 * `server_outside_package` refuses it, found or not).
 */
function notOnPath(why: string): OutsidePackage {
  return { via: 'PATH', target: '', how: `whatever PATH holds under that name when yolop starts it (${why}, and no directory on PATH has it now)` };
}

/**
 * An MCP server's command as the host's MCP client starts it: argv[0] from the workspace
 * with the server's PATH, no `<package>/bin` (module comment). Such a program is outside
 * the package unless an absolute path names a file in it.
 */
function inspectMcpCommand(
  pkgReal: string,
  packageDir: string,
  command: string,
  pathDirs: string[],
  cwd: string | undefined,
  check: ProgramCheck,
): CommandInspection {
  const shownCmd = JSON.stringify(command);
  if (command.includes('/')) {
    if (isAbsolute(command)) {
      const file = normalize(command);
      const named = inside(pkgReal, file) || inside(resolve(packageDir), file);
      const outside: OutsidePackage | undefined = named ? undefined : { via: 'absolute', target: file, how: `the absolute path ${file}, outside the package` };
      const { problem, warning, refused } = startProblem(file, file, pathDirs, check);
      if (problem) return { ok: false, detail: problem, ...(outside ? { outside } : {}), ...(refused ? { refused } : {}) };
      const real = named ? leavesPackage(pkgReal, file) : undefined;
      const link: OutsidePackage | undefined = real ? { via: 'symlink', target: real, how: `a symlink ${file} -> ${real} out of the package` } : undefined;
      const out = outside ?? link;
      return {
        ok: true,
        path: file,
        where: out ? 'outside' : 'package',
        ...(out ? { outside: out } : {}),
        detail: out ? `${shownCmd} runs ${out.how} (not shipped in the package, not covered by its content hash)` : `${file} in the package`,
        ...(warning ? { warning } : {}),
      };
    }
    // Relative to wherever yolop runs: the workspace, never the package.
    const file = cwd === undefined ? command : resolve(cwd, command);
    const outside: OutsidePackage = {
      via: 'workspace',
      target: file,
      how: `${command} relative to the workspace yolop runs in${cwd === undefined ? '' : ` (here ${file})`}, outside the package`,
    };
    if (cwd === undefined)
      return { ok: false, detail: `${shownCmd} names a file relative to the workspace yolop runs in, not a program in the package`, outside };
    const { problem, warning, refused } = startProblem(file, file, pathDirs, check);
    if (problem) return { ok: false, detail: `${shownCmd} is relative to the workspace (${cwd}), and ${problem}`, outside, ...(refused ? { refused } : {}) };
    return { ok: true, path: file, where: 'outside', outside, detail: `${shownCmd} runs ${outside.how}`, ...(warning ? { warning } : {}) };
  }
  // execvp's search: the first executable file of that name, else (to say why it cannot start) the first file.
  const candidates = pathDirs.map((d) => join(d, command));
  const found = candidates.find((f) => executableProblem(f, f) === undefined) ?? candidates.find(isFile);
  if (!found)
    return {
      ok: false,
      detail: `the program was not found (ENOENT: yolop starts an MCP server with your PATH, without the package's bin/, and ${shownCmd} is not on it): install the program that provides ${command}, or put its directory on PATH before yolop starts`,
      outside: notOnPath('an MCP server is not looked up in the package'),
    };
  const outside: OutsidePackage = { via: 'PATH', target: found, how: `${found}, found on PATH` };
  const { problem, warning, refused } = startProblem(found, found, pathDirs, check);
  if (problem)
    return { ok: false, detail: `${command} resolves on PATH to ${found}, which cannot start: ${problem}`, outside, ...(refused ? { refused } : {}) };
  return { ok: true, path: found, where: 'outside', outside, detail: `${command} found on PATH at ${found}`, ...(warning ? { warning } : {}) };
}
