/**
 * The mistakes people make at a command line, each run through the built CLI,
 * in human mode and with --json: the exit status, the message and the hint are
 * ours (what went wrong, what to type instead), in both modes the same, and no
 * output shows oclif's internals: its name, command ids joined with ":"
 * (`instal:lsp`, `lock:export`), "The following error occurred", " ›   Error:".
 * The state checks at the end: a mistake changes nothing on disk.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, jsonOf, makeTempHome, runCli, type RunResult, type TempHome } from '../helpers/home.js';
import { agentView } from '../helpers/agent-view.js';

let home: TempHome;
/** The working directory of every run: ./examples (a link to the repository's) and ./lock-dir. */
let cwd: string;
const run = (argv: string[]) => runCli(argv, { env: home.env, cwd });

/**
 * A help page (`<words> --help`, `help <words>`): the same argv in the same environment
 * prints the same page whatever is installed, and several tests below read the same
 * pages (`install --help` three times, `set-secret --help` three times, ...): each is
 * run once per file and shared. A copy per caller, so no test sees another's changes.
 */
const helpPages = new Map<string, Promise<RunResult>>();
const help = async (argv: string[]): Promise<RunResult> => {
  if (!argv.includes('--help') && argv[0] !== 'help') throw new Error(`not a help page: ${argv.join(' ')}`);
  const key = JSON.stringify(argv);
  if (!helpPages.has(key)) helpPages.set(key, run(argv));
  return { ...(await helpPages.get(key)!) };
};

interface Mistake {
  what: string;
  argv: string[];
  /** argv for the --json run when appending --json would change the mistake. */
  jsonArgv?: string[];
  exit: number;
  message: RegExp;
  hint: RegExp;
  /** The hint must not say this (a misleading next step). */
  notHint?: RegExp;
}

const LOCKDIR = 'lock-dir';

const mistakes: Mistake[] = [
  // Commands: typos, topics, help.
  { what: 'a typo of a command', argv: ['instal', 'lsp'], exit: 2, message: /^"instal" is not a yep-ext command\.$/, hint: /Did you mean `yep-ext install`\?/ },
  { what: 'swapped letters', argv: ['isntall', 'lsp'], exit: 2, message: /"isntall" is not a yep-ext command/, hint: /`yep-ext install`/ },
  { what: 'a typo of list', argv: ['lsit'], exit: 2, message: /"lsit" is not/, hint: /`yep-ext list`/ },
  { what: 'a typo of remove', argv: ['remvoe', 'echo-node'], exit: 2, message: /"remvoe" is not/, hint: /`yep-ext remove`/ },
  {
    what: 'a typo inside a topic',
    argv: ['lock', 'exprt', 'x.lock'],
    exit: 2,
    message: /^"lock exprt" is not a yep-ext command\.$/,
    hint: /`yep-ext lock export`/,
  },
  // A typo of a topic: the topic's command the next word names, not a command that merely starts like the typo.
  {
    what: 'a typo of a topic before its command',
    argv: ['polcy', 'check'],
    exit: 2,
    message: /^"polcy" is not a yep-ext command\.$/,
    hint: /^Did you mean `yep-ext policy check`\?/,
  },
  {
    what: 'a short topic typo before its command',
    argv: ['cach', 'verify'],
    exit: 2,
    message: /^"cach" is not a yep-ext command\.$/,
    hint: /^Did you mean `yep-ext cache verify`\?/,
  },
  {
    what: 'a topic typo before a mistyped command',
    argv: ['lok', 'exprt', 'x.lock'],
    exit: 2,
    message: /^"lok" is not a yep-ext command\.$/,
    hint: /^Did you mean `yep-ext lock export`\?/,
  },
  { what: 'a typo of a topic alone', argv: ['polcy'], exit: 2, message: /^"polcy" is not a yep-ext command\.$/, hint: /^Did you mean `yep-ext policy`\?/ },
  { what: 'help for a mistyped command', argv: ['help', 'instal'], exit: 2, message: /"instal" is not/, hint: /`yep-ext install`/ },
  {
    what: '--help on a mistyped command',
    argv: ['instal', '--help'],
    jsonArgv: ['instal', '--json', '--help'],
    exit: 2,
    message: /"instal" is not/,
    hint: /`yep-ext install`/,
  },
  {
    what: 'version as a command (cargo version, gh version)',
    argv: ['version'],
    exit: 2,
    message: /^"version" is not a yep-ext command\.$/,
    hint: /^`yep-ext --version` prints yep-ext's version\./,
  },
  {
    what: 'a word that is no command at all',
    argv: ['frobnicate'],
    exit: 2,
    message: /"frobnicate" is not a yep-ext command/,
    hint: /^`yep-ext help` lists every command\.$/,
  },
  {
    what: 'a flag before any command',
    argv: ['--bogus'],
    jsonArgv: ['--bogus', '--json'],
    exit: 2,
    message: /--bogus is not a flag of yep-ext itself/,
    hint: /yep-ext list --json/,
  },
  // Flags.
  {
    what: 'a typo of --json',
    argv: ['list', '--jsn'],
    jsonArgv: ['list', '--jsn', '--json'],
    exit: 2,
    message: /^Unknown flag --jsn for `yep-ext list`\.$/,
    hint: /Did you mean --json\?/,
  },
  { what: 'a typo of --no-verify', argv: ['list', '--no-verfy'], exit: 2, message: /Unknown flag --no-verfy/, hint: /Did you mean --no-verify\?/ },
  { what: 'a typo of --frozen', argv: ['install', '--froze'], exit: 2, message: /Unknown flag --froze for `yep-ext install`/, hint: /Did you mean --frozen\?/ },
  {
    what: 'a flag of another command',
    argv: ['remove', 'echo-node', '--index', 'http://127.0.0.1:1/'],
    exit: 2,
    message: /Unknown flag --index for `yep-ext remove`/,
    hint: /--index is a flag of `info`, `install`, `mirror`, `outdated`, `search`, `update`, not of `remove`/,
  },
  { what: 'an unknown short flag', argv: ['install', '-z', 'lsp'], exit: 2, message: /Unknown flag -z for `yep-ext install`/, hint: /-y \(--yes\)/ },
  { what: 'a value given to a switch', argv: ['list', '--verify=false'], exit: 2, message: /^--verify is a switch: it takes no value/, hint: /--no-verify/ },
  {
    what: 'an option flag without its value',
    argv: ['search', '--limit'],
    jsonArgv: ['search', '--json', '--limit'],
    exit: 2,
    message: /^--limit needs a value\.$/,
    hint: /--limit 50/,
  },
  {
    what: 'a word for a number',
    argv: ['search', '--limit', 'ten'],
    exit: 2,
    message: /^--limit needs a whole number, not "ten"\.$/,
    hint: /--limit: Show at most/,
  },
  { what: 'a number under the minimum', argv: ['search', '--limit', '0'], exit: 2, message: /^--limit must be at least 1 \(got 0\)\.$/, hint: /--limit 50/ },
  {
    what: 'a number over the maximum',
    argv: ['search', '--limit', '5000'],
    exit: 2,
    message: /^--limit must be at most 1000 \(got 5000\)\.$/,
    hint: /--limit 50/,
  },
  {
    what: 'a zero timeout',
    argv: ['doctor', './examples/echo-node', '--timeout', '0'],
    exit: 2,
    message: /^--timeout takes seconds, more than 0 and at most 3600 \(got "0"\)\.$/,
    hint: /--timeout 5/,
  },
  {
    what: 'a value outside the choices',
    argv: ['new', 'x', '--tool', 't', '--language', 'go'],
    exit: 2,
    message: /^--language must be one of typescript, python, rust, ts, py, rs \(got "go"\)\.$/,
    hint: /--language typescript/,
  },
  {
    what: 'a typo of a choice',
    argv: ['new', 'x', '--tool', 't', '--language', 'pyton'],
    exit: 2,
    message: /--language must be one of/,
    hint: /Did you mean --language python\?/,
  },
  {
    what: '--all with names',
    argv: ['update', '--all', 'extra'],
    exit: 2,
    message: /^--all updates every installed extension; it takes no names \(got "extra"\)\.$/,
    hint: /`yep-ext update` updates every one.*`yep-ext update extra`/,
  },
  {
    what: '--accept with something that is no fingerprint',
    argv: ['install', './examples/echo-node', '--accept', 'foo'],
    exit: 2,
    message: /^--accept takes a grant fingerprint, sha256: and 64 hex digits, not "foo"\.$/,
    hint: /after `grant` in the summary/,
  },
  // A repeatable flag takes one value per use: the words after it stay arguments (not swallowed as more values).
  {
    what: '--accept before the source, with no fingerprint',
    argv: ['install', '--accept', 'foo', './examples/echo-node'],
    exit: 2,
    message: /^--accept takes a grant fingerprint, sha256: and 64 hex digits, not "foo"\.$/,
    hint: /after `grant` in the summary/,
    notHint: /Give a source/,
  },
  {
    what: 'a repeatable flag before a bad name',
    argv: ['new', '--tool', 'fetch', 'bad/name'],
    exit: 2,
    message: /Invalid extension name "bad\/name"/,
    hint: /yep-ext new name --dir bad/,
  },
  {
    what: '--config before a name that is not installed',
    argv: ['enable', '--config', 'greeting=hi', 'nosuch'],
    exit: 3,
    message: /"nosuch" is not installed/,
    hint: /yep-ext list/,
  },
  {
    what: '--accept with a cut fingerprint',
    argv: ['update', 'echo-node', '--accept', 'sha256:3f1c'],
    exit: 2,
    message: /^--accept takes a grant fingerprint/,
    hint: /whole fingerprint/,
  },
  {
    what: '--lockfile without --frozen',
    argv: ['install', '--lockfile', 'x.lock'],
    exit: 2,
    message: /^--lockfile only works together with --frozen\.$/,
    hint: /yep-ext install --frozen --lockfile/,
  },
  { what: '--enable without --frozen', argv: ['install', '--enable'], exit: 2, message: /^--enable only works together with --frozen\.$/, hint: /--frozen/ },
  {
    what: '--args without --call',
    argv: ['doctor', './examples/echo-node', '--args', '{}'],
    exit: 2,
    message: /^--args only works together with --call\.$/,
    hint: /--call echo --args/,
  },
  {
    what: 'two flags that exclude each other',
    argv: ['set-secret', 'echo-node', 'token', '--unset', '--stdin'],
    exit: 2,
    message: /^--unset and --stdin cannot be used together\.$/,
    hint: /Keep one of them/,
  },
  { what: 'sources with --frozen', argv: ['install', '--frozen', 'lsp'], exit: 2, message: /takes no sources/, hint: /Drop the sources/ },
  {
    what: 'an argument outside its choices',
    argv: ['completion', 'tcsh'],
    exit: 2,
    message: /^SHELL must be one of bash, zsh, fish \(got "tcsh"\)\.$/,
    hint: /yep-ext completion bash/,
  },
  {
    what: 'two letters swapped in a short choice',
    argv: ['completion', 'zhs'],
    exit: 2,
    message: /SHELL must be one of/,
    hint: /^Did you mean `yep-ext completion zsh`\?$/,
  },
  {
    what: 'a typo of an argument choice',
    argv: ['completion', 'fihs'],
    exit: 2,
    message: /SHELL must be one of/,
    hint: /^Did you mean `yep-ext completion fish`\?$/,
  },
  // Arguments.
  {
    what: 'a missing name',
    argv: ['disable'],
    exit: 2,
    message:
      /^`yep-ext disable` needs NAME: installed extension name \(yolop-extension-<name> works too\), or the directory a path install came from \(`\.` inside it\)\.$/,
    hint: /^For example: yep-ext disable logfire$/,
  },
  {
    what: 'two missing arguments',
    argv: ['set-secret'],
    exit: 2,
    message: /^`yep-ext set-secret` needs NAME and FIELD\.$/,
    hint: /yep-ext set-secret logfire token/,
  },
  {
    what: 'one of two arguments missing',
    argv: ['set-secret', 'echo-node'],
    exit: 2,
    message: /needs FIELD: a config field declared "secret": true\./,
    hint: /yep-ext set-secret logfire token/,
  },
  {
    what: 'a missing path in a topic command',
    argv: ['lock', 'export'],
    exit: 2,
    message: /^`yep-ext lock export` needs PATH: where to write the lock \(/,
    hint: /yep-ext lock export \.\/yolop-extensions\.lock/,
  },
  {
    what: 'an argument to a command that takes none',
    argv: ['list', 'everything'],
    exit: 2,
    message: /^`yep-ext list` takes no arguments; unexpected: "everything"\.$/,
    hint: /yep-ext list --help/,
  },
  { what: 'nothing to install', argv: ['install'], exit: 2, message: /^Nothing to install\.$/, hint: /yep-ext install lsp/ },
  // Wrong kinds of paths and names.
  {
    // A package directory is read as one without ./ (test/cli/install-path-words.test.ts); a directory that holds no package is not.
    what: 'a directory without ./ that holds no plugin.json',
    argv: ['install', 'examples/echo-node/bin'],
    exit: 2,
    message: /not a valid crate or extension name/,
    hint: /yep-ext install \.\/examples\/echo-node\/bin/,
  },
  {
    what: 'a path that does not exist',
    argv: ['install', './no-such-dir'],
    exit: 3,
    message: /^No such directory: \/.*\/no-such-dir\.$/,
    hint: /Check the path/,
  },
  // Worded as doctor words the same mistake.
  {
    what: 'a file given as a package directory',
    argv: ['install', './examples/echo-node/plugin.json'],
    exit: 2,
    message: /\/plugin\.json is not a directory\.$/,
    hint: /^Pass the package directory \(the one holding plugin\.json\)\.$/,
  },
  {
    what: 'a directory given as --lockfile',
    argv: ['install', '--frozen', '--lockfile', LOCKDIR],
    exit: 2,
    message: /^--lockfile lock-dir is a directory, not a lockfile\.$/,
    hint: /--lockfile lock-dir\/yolop-extensions\.lock/,
    notHint: /mv |reinstall/,
  },
  // A path to write: a directory there, or a directory that does not exist, is a mistake with the command to type (not "Could not write: ENOENT", nor "move the directory aside").
  {
    what: 'a directory given to lock export',
    argv: ['lock', 'export', LOCKDIR],
    exit: 2,
    message: /\/lock-dir is a directory, not a file\.$/,
    hint: /`yep-ext lock export \/.*\/lock-dir\/yolop-extensions\.lock`/,
    notHint: /mv |move/i,
  },
  {
    what: 'lock export into a directory that does not exist',
    argv: ['lock', 'export', 'no-such-dir/x.lock'],
    exit: 3,
    message: /^The directory \/.*\/no-such-dir does not exist\.$/,
    hint: /mkdir -p \/.*\/no-such-dir/,
  },
  {
    what: 'a directory given as policy init --output',
    argv: ['policy', 'init', '--from-lock', '--output', LOCKDIR],
    exit: 2,
    message: /\/lock-dir is a directory, not a file\.$/,
    hint: /--output \/.*\/lock-dir\/yep-ext-policy\.toml`/,
    notHint: /--force/,
  },
  {
    what: 'policy init --output into a directory that does not exist',
    argv: ['policy', 'init', '--from-lock', '--output', 'no-such-dir/p.toml'],
    exit: 3,
    message: /^The directory \/.*\/no-such-dir does not exist\.$/,
    hint: /mkdir -p/,
  },
  {
    what: 'an --index that is no URL',
    argv: ['search', 'lsp', '--index', 'notaurl'],
    exit: 2,
    message: /^The registry index notaurl\/: "notaurl\/" is not a valid URL\.$/,
    hint: /--index \(or YEP_EXT_INDEX\) the root of a sparse index: https:\/\/index\.crates\.io\//,
  },
  {
    what: 'a lockfile that does not exist',
    argv: ['install', '--frozen', '--lockfile', 'no-such.lock'],
    exit: 3,
    message: /There is no lockfile at no-such\.lock/,
    hint: /--lockfile/,
  },
  {
    what: 'a path as a new extension name',
    argv: ['new', 'bad/name', '--tool', 't'],
    exit: 2,
    message: /Invalid extension name "bad\/name"/,
    hint: /yep-ext new name --dir bad/,
    notHint: /yep-ext list/,
  },
  {
    what: 'a bad tool name for new',
    argv: ['new', 'good', '--tool', 'a b'],
    exit: 2,
    message: /Invalid tool name "a b"/,
    hint: /--tool forecast/,
    notHint: /yep-ext list/,
  },
  {
    what: 'disabling what is not installed',
    argv: ['disable', 'nosuch'],
    exit: 3,
    message: /"nosuch" is not installed/,
    hint: /yep-ext list/,
    notHint: /install nosuch|Install it/,
  },
  { what: 'a typo of an installed name', argv: ['disable', 'echo-nod'], exit: 3, message: /"echo-nod" is not installed/, hint: /^Did you mean `echo-node`\?/ },
  {
    what: 'updating what is not installed',
    argv: ['update', 'echo-nde'],
    exit: 3,
    message: /"echo-nde" is not installed/,
    hint: /Did you mean `echo-node`\?.*yep-ext list/,
  },
  // Worded as disable, verify and update word it.
  {
    what: 'removing what is not installed',
    argv: ['remove', 'nosuch'],
    exit: 3,
    message: /"nosuch" is not installed/,
    hint: /^Run `yep-ext list` to see what is installed\.$/,
  },
  {
    what: 'doctor of a name that is not installed',
    argv: ['doctor', 'nosuch'],
    exit: 3,
    message: /"nosuch" is not installed/,
    hint: /^Run `yep-ext list` to see what is installed; to check a package directory, pass a path such as \.\/nosuch\.$/,
  },
  // A directory is read as the source it names (test/cli/name-by-directory.test.ts: the one installed from it).
  {
    what: 'a directory nothing is installed from',
    argv: ['disable', './lock-dir'],
    exit: 3,
    message: /^No installed extension comes from the directory \.\/lock-dir:/,
    hint: /^`yep-ext install \.\/lock-dir` installs it/,
  },
  {
    what: 'an aliased command with a typo of a name',
    argv: ['rm', 'echonode'],
    exit: 3,
    message: /"echonode" is not installed/,
    hint: /Did you mean `echo-node`\?/,
  },
];

function parseHuman(stderr: string): { message: string; hint: string } {
  const m = /^error: ([\s\S]*?)(?:\nhint: ([\s\S]*?))?\n?$/.exec(stderr);
  if (!m) throw new Error(`stderr is not "error: …\\nhint: …":\n${stderr}`);
  return { message: m[1]!, hint: m[2] ?? '' };
}

/** Output that shows oclif's internals instead of ours. */
function leaks(text: string, argv: string[]): string[] {
  const found: string[] = [];
  if (/oclif/i.test(text)) found.push('the word oclif');
  if (/The following errors? occurred/.test(text)) found.push('"The following error occurred"');
  if (text.includes(' ›   ')) found.push("oclif's ›  error block");
  if (/\b(?:lock:export|help:\w+)/.test(text)) found.push('a colon-joined command id');
  const words = argv.filter((a) => !a.startsWith('-'));
  for (let i = 0; i + 1 < words.length; i++) if (text.includes(`${words[i]}:${words[i + 1]}`)) found.push(`${words[i]}:${words[i + 1]}`);
  return found;
}

beforeAll(async () => {
  home = makeTempHome('yep-mistakes-');
  cwd = join(home.root, 'work');
  mkdirSync(join(cwd, LOCKDIR), { recursive: true });
  symlinkSync(join(REPO_ROOT, 'examples'), join(cwd, 'examples'));
  const r = await run(['install', './examples/echo-node']);
  expect(r.code, r.stderr).toBe(0);
});
afterAll(() => home.cleanup());

describe(`${mistakes.length} mistakes a user makes`, () => {
  it('covers at least 30 of them', () => {
    expect(mistakes.length).toBeGreaterThanOrEqual(30);
  });

  it.each(mistakes.map((m) => [m.what, m] as const))('%s', async (_what, m) => {
    // What a mistake must not change: the lock, the settings and the secrets, as files.
    const stateFiles = [join(home.configDir, 'extensions', 'extensions.lock'), join(home.configDir, 'settings.toml'), join(home.configDir, 'connections.toml')];
    const readState = () => stateFiles.map((f) => (existsSync(f) ? readFileSync(f, 'utf8') : null));
    const before = readState();

    const human = await run(m.argv);
    expect(human.code, `${m.argv.join(' ')}\n${human.stderr}`).toBe(m.exit);
    expect(human.stdout).toBe('');
    const h = parseHuman(human.stderr);
    expect(h.message).toMatch(m.message);
    expect(h.hint).toMatch(m.hint);
    if (m.notHint) expect(h.hint).not.toMatch(m.notHint);
    expect(leaks(human.stderr, m.argv)).toEqual([]);

    const jsonArgv = m.jsonArgv ?? [...m.argv, '--json'];
    const json = await run(jsonArgv);
    expect(json.code, `${jsonArgv.join(' ')}\n${json.stdout}${json.stderr}`).toBe(m.exit);
    expect(json.stderr).toBe('');
    const { error } = jsonOf<{ error: { code: string; message: string; hint: string } }>(json);
    expect(error.code).toMatch(/^E_[A-Z_]+$/);
    // The same words in both modes.
    expect(error.message).toBe(h.message);
    expect(error.hint).toBe(h.hint);
    expect(leaks(json.stdout, jsonArgv)).toEqual([]);

    // A mistake changes nothing.
    expect(readState()).toEqual(before);
  });
});

describe('standard input is never an argument', () => {
  it('a name piped to `disable` with no NAME is a usage error, and settings.toml is untouched', async () => {
    expect((await run(['enable', 'echo-node'])).code).toBe(0);
    const settings = join(home.configDir, 'settings.toml');
    const before = readFileSync(settings, 'utf8');
    const r = await runCli(['disable'], { env: home.env, cwd, input: 'echo-node' });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/needs NAME/);
    expect(readFileSync(settings, 'utf8')).toBe(before);
    expect(before).not.toMatch(/enabled = false/);
  });
});

describe('forgiveness that succeeds', () => {
  it('help <command> prints that command’s help, like <command> --help', async () => {
    for (const words of [['install'], ['lock', 'export'], ['set-secret']]) {
      const viaHelp = await help(['help', ...words]);
      const viaFlag = await help([...words, '--help']);
      expect(viaHelp.code).toBe(0);
      expect(viaHelp.stdout).toBe(viaFlag.stdout);
      expect(viaHelp.stdout).toContain(`$ yep-ext ${words.join(' ')}`);
    }
  });

  it('aliases npm, pnpm, cargo and gh users type: uninstall, rm and un remove, i and add install, ls lists, upgrade and up update, view and show are info', async () => {
    const ls = await run(['ls', '--json']);
    expect(jsonOf(ls).extensions.map((e: { name: string }) => e.name)).toEqual(['echo-node']);
    for (const alias of ['upgrade', 'up']) {
      const up = await run([alias, 'echo-node', '--json']);
      expect(up.code, up.stderr).toBe(0);
      expect(jsonOf(up).updates[0]).toMatchObject({ name: 'echo-node' });
    }
    for (const alias of ['view', 'show']) {
      const r = await run([alias, 'echo-node', '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(jsonOf(r)).toMatchObject({ name: 'echo-node' });
    }
    const lock = join(home.configDir, 'extensions', 'extensions.lock');
    const installs = ['i', 'add'];
    for (const alias of ['uninstall', 'rm', 'un']) {
      const r = await run([alias, 'echo-node', '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(readdirSync(join(home.configDir, 'extensions'))).not.toContain('echo-node');
      expect(readFileSync(lock, 'utf8')).not.toContain('echo-node');
      const again = await run([installs.shift() ?? 'install', './examples/echo-node']);
      expect(again.code, again.stderr).toBe(0);
      expect(readFileSync(lock, 'utf8')).toContain('name = "echo-node"');
    }
    expect(installs).toEqual([]);
  });

  it('--json, --no-color, -q, --quiet and --verbose before the command mean what they mean after it (cargo -q build, npm --json ls)', async () => {
    const after = await run(['list', '--json']);
    const before = await run(['--json', 'list']);
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toBe(after.stdout);
    expect(jsonOf(before).extensions.map((e: { name: string }) => e.name)).toEqual(['echo-node']);
    const quiet = await run(['-q', '--no-color', 'verify', 'echo-node']);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout).toBe('1 verified.\n');
    // Every command has them (common-flags.ts globalFlags): `-q enable` is `enable -q`.
    const enable = await run(['-q', 'enable', 'echo-node']);
    expect(enable.code, enable.stderr).toBe(0);
    expect(enable.stdout).toBe('Enabled echo-node.\n');
    expect(Object.keys(agentView(home.configDir))).toContain('echo-node');
    expect((await run(['disable', 'echo-node'])).code).toBe(0);
    expect(Object.keys(agentView(home.configDir))).not.toContain('echo-node');
  });

  it('root help lists commands once (no alias rows) and points to the environment variables', async () => {
    const r = await help(['--help']);
    expect(r.stdout).toMatch(/^ {2}remove {2,}/m);
    expect(r.stdout).not.toMatch(/^ {2}(rm|uninstall|ls|upgrade) {2,}/m);
    expect(r.stdout).toContain('docs/configuration.md');
    expect(leaks(r.stdout, [])).toEqual([]);
  });

  it('no help page shows oclif or a colon-joined command id', async () => {
    for (const words of [[], ['install'], ['list'], ['lock'], ['lock', 'export'], ['set-secret'], ['update'], ['completion'], ['doctor']]) {
      const r = await help([...words, '--help']);
      expect(r.code).toBe(0);
      expect(leaks(r.stdout + r.stderr, words), words.join(' ')).toEqual([]);
    }
  });

  it("install's usage line shows the flags that need --frozen without a stray space ([--enable], not [--enable ])", async () => {
    const usage = (await help(['install', '--help'])).stdout.split('\n\n').find((s) => s.startsWith('USAGE'))!;
    expect(usage).toContain('[--enable] [--lockfile <value>]');
    expect(usage).not.toMatch(/ \]/);
  });

  it('set-secret shows its two arguments as two, not as lists', async () => {
    const r = await help(['set-secret', '--help']);
    expect(r.stdout).toContain('$ yep-ext set-secret NAME FIELD');
    expect(r.stdout).not.toContain('NAME...');
  });

  it('global flags only where they act: --index on install, update and search only', async () => {
    for (const cmd of ['install', 'update', 'search']) expect((await help([cmd, '--help'])).stdout, cmd).toContain('--index');
    for (const cmd of ['list', 'remove', 'enable', 'disable', 'doctor', 'set-secret', 'new', 'lock export'])
      expect((await help([...cmd.split(' '), '--help'])).stdout, cmd).not.toContain('--index');
  });
});

describe('a credential typed into a URL never reaches the output', () => {
  it('install of a git URL with user:token@ is refused (exit 2) in both modes without the token', async () => {
    const token = 'tok-5e3d9f-SEKRET';
    const url = `https://me:${token}@127.0.0.1:9/acme/ext.git`;
    for (const args of [
      ['install', url, '--yes'],
      ['install', url, '--yes', '--json'],
    ]) {
      const r = await run(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout + r.stderr, args.join(' ')).not.toContain(token);
      expect(r.stdout + r.stderr).toContain('[redacted]');
    }
    expect(jsonOf(await run(['install', url, '--json'])).error).toMatchObject({
      code: 'E_USAGE',
      message: expect.stringContaining('https://[redacted]@127.0.0.1:9/acme/ext.git'),
    });
  });
});
