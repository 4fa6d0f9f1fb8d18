/**
 * Shell completion end to end: `yep-ext completion bash|zsh|fish` scripts run in
 * the real shells and complete commands, topics, flags, flag values, installed
 * extension names, secret field names and paths; `__complete` (answered by the
 * dispatcher from the command table) is checked directly. zsh and fish are needed
 * (apt-get install zsh fish); without them their tests skip, unless
 * YEP_EXT_REQUIRE_ALL=1 (then they fail).
 *
 * The shells' scripts are the subject: what they run and how they read its answer. The
 * `yep-ext` they find on PATH is a bash shim that hands its directory and words to this
 * process, which runs them through the dispatcher (runCli) and hands back the status and
 * stdout, and records every call (each must have come from the shell, exited 0 and said
 * nothing on stderr). One completion per shell has this checkout's bin/run.js as the
 * `yep-ext` on PATH instead, end to end through the built CLI.
 */
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';

/** Whether `shell` runs here, asked once per shell: every zsh and fish test asks. */
const found = new Map<string, boolean>();
const has = (shell: string): boolean => {
  let ok = found.get(shell);
  if (ok === undefined) {
    ok = spawnSync(shell, ['-c', 'exit 0']).status === 0;
    found.set(shell, ok);
  }
  return ok;
};
/** describe.skipIf: skip without the shell unless every test is required (then the test fails, saying why). */
const missing = (shell: string): boolean => !has(shell) && process.env.YEP_EXT_REQUIRE_ALL !== '1';
const needs = (shell: string): void => {
  if (!has(shell)) throw new Error(`${shell} is needed for this test (apt-get install ${shell}); YEP_EXT_REQUIRE_ALL=1 does not let it skip`);
};

let home: TempHome;
/** The shells' environment: the shim first on PATH. */
let env: Record<string, string>;
/** The same with the built CLI first on PATH instead. */
let realEnv: Record<string, string>;
let work: string;
/** Serves the shim's calls (see the header). */
let server: Server;
/** Every command line the shim was given, with how its run ended. */
const calls: { args: string[]; code: number | null; stderr: string }[] = [];
/** The file holding `yep-ext completion <shell>`'s script, by shell. */
const scripts: Record<string, string> = {};

beforeAll(async () => {
  home = makeTempHome('yep-complete-');
  const secret = {
    config_schema: {
      type: 'object',
      properties: { token: { type: 'string', secret: true, env: 'T' }, api_key: { type: 'string', secret: true, env: 'K' }, endpoint: { type: 'string' } },
    },
  };
  for (const [name, yolop] of [
    ['logfire', secret],
    ['lsp', {}],
    ['lsp-extra', {}],
  ] as const) {
    const r = await runCli(['install', writePackage(join(home.root, 'src', name), { name, yolop })], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
  }
  // A `yep-ext` command on PATH, as after `npm install -g`.
  const bin = join(home.root, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'yep-ext'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(bin, 'yep-ext'), 0o755);
  realEnv = { ...home.env, PATH: `${bin}:${home.env.PATH}` };
  server = createServer((socket) => {
    let received = Buffer.alloc(0);
    let started = false;
    socket.on('error', () => {});
    socket.on('data', (d: Buffer) => {
      received = Buffer.concat([received, d]);
      // The shim sends its directory, the number of words and the words, each NUL-terminated.
      const fields = received.toString('utf8').split('\0');
      if (started || fields.length < 3 || fields.length < Number(fields[1]) + 3) return;
      started = true;
      const [cwd, count, ...words] = fields;
      const args = words.slice(0, Number(count));
      void runCli(args, { env, cwd }).then(
        (r) => {
          calls.push({ args, code: r.code, stderr: r.stderr });
          socket.end(`${r.code}\n${r.stdout}`);
        },
        (e: unknown) => {
          calls.push({ args, code: null, stderr: String(e) });
          socket.end('70\n');
        },
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  const shim = join(home.root, 'shim');
  mkdirSync(shim);
  writeFileSync(
    join(shim, 'yep-ext'),
    `#!/bin/bash\nexec 3<>/dev/tcp/127.0.0.1/${port} || exit 70\nprintf '%s\\0' "$PWD" "$#" "$@" >&3\nIFS= read -r code <&3\ncat <&3\nexit "$code"\n`,
  );
  chmodSync(join(shim, 'yep-ext'), 0o755);
  env = { ...home.env, PATH: `${shim}:${home.env.PATH}` };
  work = join(home.root, 'work');
  mkdirSync(join(work, 'locks'), { recursive: true });
  writeFileSync(join(work, 'team.lock'), '');
  // Each shell's script, printed once and sourced by every completion below: the shells' own
  // calls of `yep-ext __complete` are the processes under test; `eval "$(yep-ext completion
  // bash)"` as the user writes it is checked once (is registered for the yep-ext command).
  for (const shell of ['bash', 'zsh', 'fish']) {
    const r = await runCli(['completion', shell], { env });
    expect(r.code, r.stderr).toBe(0);
    scripts[shell] = join(home.root, `completion.${shell}`);
    writeFileSync(scripts[shell], r.stdout);
  }
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  home.cleanup();
});

/**
 * Run a shell (asynchronously: this process answers the shim meanwhile); its stdout lines.
 * Through the shim, every call it made must have exited 0 without a word on stderr, and
 * there must have been one.
 */
async function inShell(shell: string, args: string[], real: boolean): Promise<string[]> {
  const before = calls.length;
  const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(shell, args, { env: real ? realEnv : env, cwd: work, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
  expect(r.code, r.stderr).toBe(0);
  if (!real) {
    const made = calls.slice(before);
    expect(made.length, `${shell} never ran yep-ext`).toBeGreaterThan(0);
    for (const call of made) expect(call, JSON.stringify(call.args)).toMatchObject({ code: 0, stderr: '' });
  }
  return r.stdout.split('\n').filter(Boolean);
}

/** `__complete` output lines, values only. */
async function complete(words: string[], extra: Record<string, string> = {}): Promise<string[]> {
  const r = await runCli(['__complete', ...words], { env: { ...env, ...extra } });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t')[0]!);
}

describe('__complete', () => {
  const cases: Array<[string, string[], (out: string[]) => void]> = [
    [
      'commands, aliases and topics at the start',
      [''],
      (o) => expect(o).toEqual(expect.arrayContaining(['install', 'list', 'ls', 'remove', 'rm', 'uninstall', 'upgrade', 'lock', 'help', 'completion'])),
    ],
    ['no hidden command', [''], (o) => expect(o).not.toContain('__complete')],
    ["a topic's commands", ['lock', ''], (o) => expect(o).toEqual(['export'])],
    ['installed names for disable', ['disable', ''], (o) => expect(o).toEqual(['logfire', 'lsp', 'lsp-extra'])],
    ['installed names through an alias', ['rm', 'l'], (o) => expect(o).toEqual(['logfire', 'lsp', 'lsp-extra'])],
    ['update: names not given yet', ['update', 'lsp', ''], (o) => expect(o).toEqual(['logfire', 'lsp-extra'])],
    ["set-secret: the extension's secret fields", ['set-secret', 'logfire', ''], (o) => expect(o).toEqual(['api_key', 'token'])],
    ['set-secret: nothing after the field', ['set-secret', 'logfire', 'token', ''], (o) => expect(o).toEqual([])],
    ['doctor: names and directories', ['doctor', ''], (o) => expect(o).toEqual(['logfire', 'lsp', 'lsp-extra', ':dirs'])],
    ['install: paths', ['install', './'], (o) => expect(o).toEqual([':files'])],
    ['flags', ['list', '--'], (o) => expect(o).toEqual(['--json', '--no-color', '--quiet', '--verbose', '--profile', '--verify', '--no-verify', '--help'])],
    ['flag choices', ['new', 'x', '--language', ''], (o) => expect(o).toEqual(['typescript', 'python', 'rust', 'ts', 'py', 'rs'])],
    ['flag choices after a short flag', ['new', 'x', '-l', ''], (o) => expect(o).toEqual(['typescript', 'python', 'rust', 'ts', 'py', 'rs'])],
    ['a path flag', ['install', '--frozen', '--lockfile', ''], (o) => expect(o).toEqual([':files'])],
    ['after a flag value, arguments again', ['enable', '--config', 'a=b', ''], (o) => expect(o).toEqual(['logfire', 'lsp', 'lsp-extra'])],
    ['help: command names', ['help', 'lo'], (o) => expect(o).toContain('lock')],
    ['completion: the shells', ['completion', ''], (o) => expect(o).toEqual(['bash', 'zsh', 'fish'])],
    ['--index only where it exists', ['search', '--'], (o) => expect(o).toContain('--index')],
  ];
  it.each(cases)('%s', async (_what, words, check) => check(await complete(words)));

  it('is answered in every environment, a debugging one too', async () => {
    for (const extra of [{}, { YEP_EXT_DEBUG: '1' }]) {
      const r = await runCli(['__complete', 'disable', ''], { env: { ...env, ...extra } });
      expect(r.stdout).toBe('logfire\nlsp\nlsp-extra\n');
    }
  });

  it('is no command of the help or of the suggestions', async () => {
    expect((await runCli(['--help'], { env })).stdout).not.toContain('__complete');
    expect((await runCli(['__complet'], { env })).stderr).not.toContain('__complete');
  });

  it('an unreadable store only means no names', async () => {
    expect(await complete(['disable', ''], { YOLOP_EXTENSIONS_DIR: join(home.root, 'nowhere') })).toEqual([]);
  });
});

describe('yep-ext completion', () => {
  it.each(['bash', 'zsh', 'fish'])('prints the %s script (and it as JSON with --json)', async (shell) => {
    const r = await runCli(['completion', shell], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('yep-ext __complete');
    expect(jsonOf(await runCli(['completion', shell, '--json'], { env }))).toEqual({ shell, script: r.stdout });
  });

  it('names the shells it knows when given another', async () => {
    const r = await runCli(['completion', 'tcsh'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/SHELL must be one of bash, zsh, fish/);
    expect(r.stderr).not.toMatch(/oclif/i);
  });
});

describe('bash', () => {
  /** Complete `line` in bash with the script loaded; the COMPREPLY entries. */
  function bash(line: string, real = false): Promise<string[]> {
    const script = `source ${scripts.bash}; COMP_LINE=${JSON.stringify(line)}; COMP_POINT=\${#COMP_LINE}; _yep_ext_complete; printf '%s\\n' "\${COMPREPLY[@]}"`;
    return inShell('bash', ['--norc', '-c', script], real);
  }
  it('completes a command', async () => expect(await bash('yep-ext dis')).toEqual(['disable']));
  it('completes installed names (through the built CLI)', async () => expect(await bash('yep-ext enable ls', true)).toEqual(['lsp', 'lsp-extra']));
  it('completes a secret field', async () => expect(await bash('yep-ext set-secret logfire t')).toEqual(['token']));
  it('completes flags and their values', async () => {
    expect(await bash('yep-ext list --no')).toEqual(['--no-color', '--no-verify']);
    expect(await bash('yep-ext new x --language p')).toEqual(['python', 'py']);
  });
  it('completes paths where a command takes one', async () => {
    expect(await bash('yep-ext install --frozen --lockfile te')).toEqual(['team.lock']);
    expect((await bash('yep-ext doctor lo')).sort()).toEqual(['locks', 'logfire']);
  });
  it('is registered for the yep-ext command', async () => {
    const out = await inShell('bash', ['--norc', '-c', 'eval "$(yep-ext completion bash)"; complete -p yep-ext'], false);
    expect(out.join('\n')).toContain('-F _yep_ext_complete yep-ext');
  });
});

describe.skipIf(missing('zsh'))('zsh', () => {
  /** Run the zsh completion function for `words` (CURRENT = the last), with the completion system's output functions recorded. */
  function zsh(words: string[], real = false): Promise<string[]> {
    needs('zsh');
    const script = [
      // Stand-ins for the completion system (only available inside a completion widget): they print what they are given.
      'compdef() { :; }',
      '_describe() { print -rl -- "${(@P)4}"; }',
      '_files() { print -r -- "FILES $*"; }',
      `source ${scripts.zsh}`,
      `words=(${words.map((w) => `'${w}'`).join(' ')}); CURRENT=${words.length}`,
      '_yep_ext',
    ].join('\n');
    return inShell('zsh', ['-f', '-c', script], real);
  }
  it('offers commands with their descriptions', async () => {
    const out = await zsh(['yep-ext', 'dis']);
    expect(out).toContain('disable:Disable an extension, keeping its configuration.');
    expect(out).toContain('lock');
  });
  it('offers installed names (through the built CLI) and secret fields', async () => {
    expect(await zsh(['yep-ext', 'disable', ''], true)).toEqual(['logfire', 'lsp', 'lsp-extra']);
    expect(await zsh(['yep-ext', 'set-secret', 'logfire', ''])).toEqual(['api_key', 'token']);
  });
  it('hands paths to _files', async () => {
    expect(await zsh(['yep-ext', 'install', ''])).toEqual(['FILES ']);
    expect(await zsh(['yep-ext', 'new', 'x', '--dir', ''])).toEqual(['FILES -/']);
  });
});

describe.skipIf(missing('fish'))('fish', () => {
  /** fish's own completion of `line` (complete -C), with the script sourced. */
  function fish(line: string, real = false): Promise<string[]> {
    needs('fish');
    return inShell('fish', ['--no-config', '-c', `source ${scripts.fish}; complete -C${JSON.stringify(line)}`], real);
  }
  it('completes commands with descriptions', async () =>
    expect(await fish('yep-ext dis')).toEqual(['disable\tDisable an extension, keeping its configuration.']));
  it('completes installed names (through the built CLI) and secret fields', async () => {
    expect(await fish('yep-ext remove ls', true)).toEqual(['lsp', 'lsp-extra']);
    expect(await fish('yep-ext set-secret logfire ')).toEqual(['api_key', 'token']);
  });
  it('completes flags, values and paths', async () => {
    expect(await fish('yep-ext list --j')).toEqual(['--json\tFormat output as json.']);
    expect(await fish('yep-ext new x -l r')).toEqual(['rs', 'rust']);
    expect(await fish('yep-ext install --frozen --lockfile te')).toEqual(['team.lock']);
  });
});
