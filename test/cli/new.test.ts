/**
 * `yep-ext new` as a user runs it (needs `npm run build`): for each language and a
 * matrix of facets, new -> doctor ./<dir> passes with no warning -> install ->
 * enable -> doctor <name> passes. Rust builds with the printed step when a
 * serde_json crate can be built offline here (otherwise that test is skipped
 * with the reason in its name, and the generated files are still checked).
 * Refusals: clear messages, documented exit codes, nothing written.
 */
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { withSeams } from '../helpers/seams.mjs';
import { itNeeding, need } from '../helpers/needs.js';
import { NEW_FULL_FLAGS, realTypescriptBuild } from '../helpers/ts-builds.js';
import {
  detectRustBuild,
  fillHookHandler,
  linkTypescriptToolchain,
  prepareRustRoot,
  runScriptedSession,
  runShell,
  seedRustDependencies,
  startServer,
  transpileTypescriptPackage,
} from '../helpers/scaffold.js';

let home: TempHome;
let work: string;
/** python3 from /usr/bin (a pyenv shim is a shell script run on every start); the shebang stays `/usr/bin/env python3`. */
let env: Record<string, string>;
beforeEach(() => {
  home = makeTempHome('yep-new-cli-');
  work = join(home.root, 'work');
  mkdirSync(work);
  env = { ...home.env, PATH: `/usr/bin:${home.env.PATH}` };
});
afterEach(() => home.cleanup());

const cli = (args: string[]) => runCli(args, { env, cwd: work });

/**
 * The words `sh` reads each command line (the text after `yep-ext`) into, as a user's shell
 * would hand them to yep-ext: quotes removed, `~` expanded with env's HOME. One sh for all lines.
 */
function shellWords(lines: string[], cwd: string, shellEnv: Record<string, string>): string[][] {
  const script = lines.map((l) => `set -- ${l}\nprintf '%s\\0' "$#" "$@"`).join('\n');
  const r = spawnSync('sh', ['-c', script], { cwd, env: shellEnv, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  const fields = r.stdout.split('\0');
  const out: string[][] = [];
  for (let i = 0; i < fields.length - 1; ) {
    const n = Number(fields[i]);
    out.push(fields.slice(i + 1, i + 1 + n));
    i += 1 + n;
  }
  return out;
}

interface Check {
  name: string;
  status: string;
  detail: string;
}

/** doctor --json, expecting every check to pass (no warning, no failure). */
async function expectDoctorClean(target: string): Promise<Check[]> {
  const r = await cli(['doctor', target, '--json']);
  const report = jsonOf<{ ok: boolean; checks: Check[] }>(r);
  expect(
    report.checks.filter((c) => c.status !== 'pass'),
    JSON.stringify(report.checks, null, 1),
  ).toEqual([]);
  expect(report.ok).toBe(true);
  expect(r.code).toBe(0);
  return report.checks;
}

/**
 * A TypeScript package's build, as its author runs it: doctor before the build fails
 * and names the command; `build: 'real'` builds the package with tsc --strict (the
 * toolchain linked in instead of downloaded): the build the run's shared tsc process
 * made of an identical package (../helpers/ts-builds.ts); `'transpile'` stands in for it
 * where the build itself is covered elsewhere.
 */
async function buildTypescript(name: string, build: 'real' | 'transpile'): Promise<void> {
  const dir = join(work, name);
  if (build === 'transpile') return transpileTypescriptPackage(dir);
  linkTypescriptToolchain(dir);
  const before = await cli(['doctor', `./${name}`]);
  expect(before.code).toBe(9);
  const hint = /hint: .*server is not built yet \(dist\/server\.js is missing\): run `(\(cd [^`]+\))`/.exec(before.stderr);
  expect(hint?.[1], before.stderr).toBe(`(cd ${dir} && npm run build)`);
  const built = await realTypescriptBuild(name, dir);
  expect(built.code, built.output).toBe(0);
}

/** new -> (build) -> doctor ./dir (clean) -> install -> enable -> doctor name (clean). */
async function fullFlow(name: string, flags: string[], build: 'real' | 'transpile' | undefined): Promise<void> {
  const created = await cli(['new', name, ...flags]);
  expect(created.code, created.stderr).toBe(0);
  expect(created.stdout).toContain(`yep-ext doctor ./${name}`);
  if (build) await buildTypescript(name, build);
  const local = await expectDoctorClean(`./${name}`);
  expect(local.map((c) => c.name)).toEqual(
    expect.arrayContaining(['manifest', 'command', 'handshake', 'tools', 'shutdown', 'stdin_eof', 'messages', 'processes']),
  );
  const installed = await cli(['install', `./${name}`]);
  expect(installed.code, installed.stderr).toBe(0);
  const enabled = await cli(['enable', name]);
  expect(enabled.code, enabled.stderr).toBe(0);
  expect(enabled.stdout).toContain(`Enabled ${name}`);
  await expectDoctorClean(name);
}

const FULL = NEW_FULL_FLAGS;
const MATRIX: [string, string[]][] = [
  ['every facet', FULL],
  ['tools only', ['--tool', 'only']],
  ['hooks, a command and a derived-env secret', ['--hook', 'pre_tool_use:bash', '--command', 'go', '--config', 'token:secret']],
  ['skills only (a server with nothing to handle)', ['--skills']],
];

describe.each([
  ['typescript (the default)', [], true],
  ['python', ['--language', 'python'], false],
])('%s', (_label, languageFlags, typescript) => {
  it.each(MATRIX)('%s: new -> doctor ./dir clean -> install -> enable -> doctor name clean', async (label, flags) => {
    const build = !typescript ? undefined : flags === FULL ? 'real' : 'transpile';
    await fullFlow(`x-${label.split(' ')[0]!.replace(/,/g, '')}`, [...languageFlags, ...flags], build);
  });
});

describe('yep-ext new NAME alone', () => {
  it('scaffolds a working TypeScript package with one sample tool, without a terminal, and says so', async () => {
    const r = await cli(['new', 'weather', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = jsonOf<{ spec: { tools: string[] }; notes: string[]; build: string; buildNeeds: string; next: string[] }>(r);
    expect(out.spec.tools).toEqual(['weather']);
    expect(out.notes.join('\n')).toContain('one sample tool, weather');
    expect(out.build).toBe('npm install && npm run build');
    expect(out.buildNeeds).toContain('npm registry');
    expect(out.next[0]).toBe('(cd ./weather && npm install && npm run build)');
    await buildTypescript('weather', 'real');
    await expectDoctorClean('./weather');
  });

  it('installed before its build: list, info and verify name the build, enable warns with it; after the build and update all is clean', async () => {
    expect((await cli(['new', 'weather'])).code).toBe(0);
    expect((await cli(['install', './weather'])).code).toBe(0);
    const dir = join(work, 'weather');
    const step = `(cd ${dir} && npm install && npm run build)`;
    const problem = `server not built yet (dist/server.js is missing): run \`${step}\``;
    expect(jsonOf<{ extensions: { problems: string[] }[] }>(await cli(['list', '--json'])).extensions[0]!.problems).toEqual([problem]);
    const info = jsonOf<{ verify: { ok: boolean; problems: string[] } }>(await cli(['info', 'weather', '--json']));
    expect(info.verify).toMatchObject({ ok: false, problems: [problem] });
    const enabled = await cli(['enable', 'weather']);
    expect(enabled.code).toBe(0);
    expect(enabled.stderr).toContain(
      `warning: weather's server is not built yet (dist/server.js is missing): yolop cannot start it until you run \`${step}\`.`,
    );
    const verify = await cli(['verify']);
    expect(verify.code).toBe(5);
    expect(verify.stderr).toContain(problem);

    await transpileTypescriptPackage(dir);
    expect((await cli(['update', 'weather'])).code).toBe(0);
    expect(jsonOf<{ extensions: { problems: string[] }[] }>(await cli(['list', '--json'])).extensions[0]!.problems).toEqual([]);
    expect((await cli(['verify'])).code).toBe(0);
    expect((await cli(['enable', 'weather'])).stderr).not.toContain('not built');
  });

  it.each([
    ['ts', 'src/server.ts'],
    ['py', 'bin/sample'],
    ['rs', 'src/main.rs'],
  ])('-l %s is accepted', async (short, source) => {
    const r = await cli(['new', 'sample', '-l', short, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf<{ server: string }>(r).server).toBe(source);
    expect(existsSync(join(work, 'sample', source))).toBe(true);
  });
});

describe('yep-ext new --help', () => {
  it('every example works when pasted into a shell (in a fresh directory, with a fresh home)', async () => {
    mkdirSync(env.HOME!, { recursive: true });
    const page = await cli(['new', '--help']);
    expect(page.code).toBe(0);
    const examples = page.stdout
      .slice(page.stdout.indexOf('\nEXAMPLES\n'))
      .split('\n')
      .filter((l) => l.startsWith('  $ yep-ext new '));
    expect(examples.length).toBeGreaterThanOrEqual(4);
    // The shell reads each line (its quotes, `~`) into the words yep-ext would get: one sh for
    // all of them, each line's words printed as a count and NUL-terminated words. The command
    // those words make runs in this process: the shell's reading is the subject here, not
    // the start of a yep-ext process (test/cli/bundle.test.ts covers that).
    const lines = examples.map((line) => line.replace(/^ {2}\$ yep-ext /, ''));
    const words = shellWords(lines, work, env);
    expect(words).toHaveLength(examples.length);
    for (const [i, line] of examples.entries()) {
      expect(words[i]![0], line).toBe('new');
      const r = await cli(words[i]!);
      expect(r.code, `${line}\n${r.stdout}${r.stderr}`).toBe(0);
    }
  });
});

describe('yep-ext new output', () => {
  it('prints what it wrote, the handlers to fill in and the next commands; --json has the same', async () => {
    // --dir must exist.
    const missing = await cli(['new', 'weather', '--tool', 'forecast', '--dir', 'exts']);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain(`The directory ${join(work, 'exts')} does not exist.`);
    mkdirSync(join(work, 'exts'));
    const j = await cli(['new', 'weather', '--tool', 'forecast', '--hook', 'pre_tool_use', '--config', 'key:secret', '--dir', 'exts', '--json']);
    expect(j.code, j.stderr).toBe(0);
    const out = jsonOf(j);
    expect(out).toMatchObject({
      name: 'weather',
      language: 'typescript',
      dir: join(work, 'exts', 'weather'),
      path: './exts/weather',
      server: 'src/server.ts',
      handlers: ['handleTool', 'handleHook'],
      build: 'npm install && npm run build',
      next: [
        '(cd ./exts/weather && npm install && npm run build)',
        'yep-ext doctor ./exts/weather',
        'yep-ext install ./exts/weather',
        'yep-ext enable weather',
      ],
    });
    expect(out.files).toEqual([
      { path: '.gitignore', mode: '0644' },
      { path: 'README.md', mode: '0644' },
      { path: 'bin/weather', mode: '0755' },
      { path: 'package.json', mode: '0644' },
      { path: 'plugin.json', mode: '0644' },
      { path: 'src/server.ts', mode: '0644' },
      { path: 'tsconfig.json', mode: '0644' },
    ]);
    expect(out.notes.join('\n')).toContain('$WEATHER_KEY');

    const human = await cli(['new', 'yolop-extension-clock', '-l', 'python', '--status']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('Created ./clock: clock, Python 3');
    expect(human.stdout).toMatch(/bin\/clock\s+0755/);
    expect(human.stdout).toContain('Note: yolop-extension-clock is the crate spelling: the extension is named clock.');
    expect(human.stdout).toContain('Next:\n  yep-ext doctor ./clock\n  yep-ext install ./clock\n  yep-ext enable clock');
    expect(existsSync(join(work, 'clock', 'plugin.json'))).toBe(true);
  });

  it('bin/ server is 0755 and plugin.json 0644 whatever the umask', async () => {
    // This process's umask, put back at once: `new` writes through it as a process of its own would.
    const umask = process.umask(0o077);
    let r: Awaited<ReturnType<typeof cli>>;
    try {
      r = await cli(['new', 'masked', '--tool', 't']);
    } finally {
      process.umask(umask);
    }
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(join(work, 'masked', 'bin', 'masked')).mode & 0o777).toBe(0o755);
    expect(statSync(join(work, 'masked', 'plugin.json')).mode & 0o777).toBe(0o644);
  });
});

describe('refusals: a clear message, the documented exit code, nothing written', () => {
  const cases: [string, string[], number, RegExp][] = [
    ['a bad name', ['new', 'bad name', '--tool', 't'], 2, /Invalid extension name "bad name"/],
    ['a name with a path in it', ['new', '../escape', '--tool', 't'], 2, /Invalid extension name/],
    ['a bad tool name', ['new', 'ok', '--tool', 'no/slash'], 2, /Invalid tool name "no\/slash"/],
    ['a duplicate tool', ['new', 'ok', '--tool', 't', '--tool', 't'], 2, /--tool t is given twice/],
    ['a bad hook event', ['new', 'ok', '--hook', 'on_start'], 2, /--hook "on_start": unknown event "on_start"; the host fires pre_tool_use and post_tool_use/],
    ['a bad hook glob', ['new', 'ok', '--hook', 'pre_tool_use:ba?h'], 2, /"ba\?h" is not a tool-name glob/],
    ['an empty hook glob', ['new', 'ok', '--hook', 'post_tool_use:'], 2, /the tool-name glob after ":" is empty/],
    [
      'bad config syntax',
      ['new', 'ok', '--tool', 't', '--config', 'token:secrt'],
      2,
      /--config "token:secrt": "secrt" is not understood[\s\S]*FIELD\[:secret\]\[:env=NAME\]/,
    ],
    ['a bad config env name', ['new', 'ok', '--tool', 't', '--config', 'token:env=1X'], 2, /"1X" is not an environment variable name/],
    ['a bad config field name', ['new', 'ok', '--tool', 't', '--config', 'to ken'], 2, /the field name "to ken" must match/],
    ['an unknown language', ['new', 'ok', '--tool', 't', '--language', 'cobol'], 2, /cobol/],
    ['an empty prompt', ['new', 'ok', '--prompt', ' '], 2, /--prompt is empty/],
    ['a rust name cargo reserves', ['new', 'build', '-l', 'rust', '--tool', 't'], 2, /Cargo reserves/],
  ];
  it.each(cases)('%s', async (_label, args, code, message) => {
    const r = await cli(args);
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('hint:');
    expect(readdirSync(work)).toEqual([]);
    expect(readdirSync(home.root).sort()).toEqual(['work']);
  });

  it('a non-empty target directory (exit 7); a file in the way; --json error shape; an empty directory is fine', async () => {
    mkdirSync(join(work, 'taken'));
    writeFileSync(join(work, 'taken', 'notes.txt'), 'mine\n');
    const r = await cli(['new', 'taken', '--tool', 't']);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('the directory is not empty (notes.txt)');
    expect(readdirSync(join(work, 'taken'))).toEqual(['notes.txt']);
    expect(readFileSync(join(work, 'taken', 'notes.txt'), 'utf8')).toBe('mine\n');

    writeFileSync(join(work, 'afile'), 'x');
    const f = await cli(['new', 'afile', '--tool', 't', '--json']);
    expect(f.code).toBe(7);
    expect(jsonOf(f).error).toMatchObject({ code: 'E_CONFLICT', message: expect.stringContaining('a file of that name exists') });
    expect(readdirSync(work).sort()).toEqual(['afile', 'taken']);

    mkdirSync(join(work, 'empty'));
    const e = await cli(['new', 'empty', '--tool', 't']);
    expect(e.code, e.stderr).toBe(0);
    expect(readdirSync(join(work, 'empty')).sort()).toEqual(['.gitignore', 'README.md', 'bin', 'package.json', 'plugin.json', 'src', 'tsconfig.json']);
  });

  it('kill -9 while writing leaves no package (only a hidden temp dir), and the next run succeeds and sweeps it once stale', async () => {
    const pauseFile = join(home.root, 'paused');
    const child = spawn(process.execPath, [BIN, 'new', 'crashy', '--tool', 't'], {
      cwd: work,
      env: withSeams({ ...env, YEP_EXT_TEST_PAUSE_AT: 'new-before-rename', YEP_EXT_TEST_PAUSE_FILE: pauseFile }),
      stdio: 'ignore',
    });
    const started = Date.now();
    while (!existsSync(pauseFile)) {
      if (Date.now() - started > 20_000) throw new Error('never paused');
      await new Promise((r) => setTimeout(r, 25));
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    expect(existsSync(join(work, 'crashy'))).toBe(false);
    const [temp] = readdirSync(work);
    expect(temp).toMatch(/^\.crashy\.yep-new-[0-9a-f]{12}$/);
    // A recent temp dir might belong to a run still in progress: left alone.
    expect((await cli(['new', 'crashy', '--tool', 't'])).code).toBe(0);
    expect(readdirSync(work).sort()).toEqual([temp, 'crashy']);
    // Once stale, the next `new` of that name removes it.
    const old = new Date(Date.now() - 3600_000);
    utimesSync(join(work, temp!), old, old);
    rmSync(join(work, 'crashy'), { recursive: true });
    expect((await cli(['new', 'crashy', '--tool', 't'])).code).toBe(0);
    expect(readdirSync(work)).toEqual(['crashy']);
  });
});

const rust = detectRustBuild();

describe('rust template', () => {
  it('writes a serde_json-only crate, bin/ ready for the build step, and shows the exact step in the output and the README', async () => {
    const r = await cli(['new', 'rusty', '-l', 'rust', '--tool', 'search', '--hook', 'pre_tool_use', '--status']);
    expect(r.code, r.stderr).toBe(0);
    const step = 'cargo build --release && cp target/release/rusty bin/';
    expect(r.stdout).toContain(`Build it (in ./rusty), after every change:\n  ${step}\n  It needs cargo, and the serde_json crate`);
    expect(r.stdout).toContain('Next:\n  (cd ./rusty && cargo build --release && cp target/release/rusty bin/)\n  yep-ext doctor ./rusty');
    const dir = join(work, 'rusty');
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain(`\`\`\`sh\n${step}\n\`\`\``);
    const cargo = readFileSync(join(dir, 'Cargo.toml'), 'utf8');
    expect(cargo).toContain('name = "yolop-extension-rusty"');
    expect(cargo).toContain('[[bin]]\nname = "rusty"');
    expect(
      cargo
        .slice(cargo.indexOf('[dependencies]'))
        .split('\n')
        .filter((l) => l.includes('=')),
    ).toEqual(['serde_json = "1"']);
    expect(readdirSync(join(dir, 'bin'))).toEqual(['.gitkeep']);
    expect(JSON.parse(readFileSync(join(dir, 'plugin.json'), 'utf8')).yolop.capabilityServer).toEqual({ command: 'rusty', args: [] });
    // Before the build, doctor says exactly what is missing and what to run.
    const d = await cli(['doctor', './rusty', '--json']);
    expect(d.code).toBe(9);
    expect(jsonOf<{ checks: Check[] }>(d).checks.find((c) => c.name === 'command')?.status).toBe('fail');
    const human = await cli(['doctor', './rusty']);
    expect(human.stderr).toContain(`run \`(cd ${dir} && ${step})\`, then doctor again`);
  });

  itNeeding(
    need(rust.ok, rust.ok ? '' : rust.missing),
    `builds with the printed step; doctor clean before and after install+enable; the scripted session validates; a filled-in hook blocks "bash"${rust.ok ? ` (serde_json from ${rust.how})` : ''}`,
    async () => {
      prepareRustRoot(home.root, rust);
      const created = await cli(['new', 'rusty', '-l', 'rust', ...FULL, '--json']);
      expect(created.code, created.stderr).toBe(0);
      const { dir, build } = jsonOf<{ dir: string; build: string }>(created);
      expect(build).toBe('cargo build --release && cp target/release/rusty bin/');
      const cargoEnv = { ...(process.env as Record<string, string>) };
      // serde_json and what it pulls in as an earlier run compiled them; this crate itself is compiled here.
      const keepDependencies = seedRustDependencies(dir, home.root, rust);
      const built = runShell(build, dir, cargoEnv);
      expect(built.code, built.output).toBe(0);
      keepDependencies();
      expect(built.output).not.toMatch(/^warning/m);
      expect(statSync(join(dir, 'bin', 'rusty')).mode & 0o111).not.toBe(0);

      await expectDoctorClean('./rusty');
      expect((await cli(['install', './rusty'])).code).toBe(0);
      expect((await cli(['enable', 'rusty'])).code).toBe(0);
      await expectDoctorClean('rusty');
      await runScriptedSession(
        dir,
        {
          name: 'rusty',
          capabilities: ['tools', 'streaming', 'prompt', 'dynamic_prompt', 'hooks', 'commands', 'status'],
          tools: ['search', 'fetch-page'],
          prompt: 'Use "search" first.\nÜñï 😀',
          hooks: true,
          dynamicPrompt: true,
          commands: ['deploy'],
          status: true,
        },
        home.root,
        env,
      );

      fillHookHandler(join(dir, 'src', 'main.rs'), 'rust');
      // The printed step's release build was checked above; this one is for the filled-in
      // handler's behaviour, which does not depend on optimization: the crate itself (its
      // dependencies stay as built) is compiled unoptimized, most of a release build's work.
      appendFileSync(join(home.root, '.cargo', 'config.toml'), '\n[profile.release.package.yolop-extension-rusty]\nopt-level = 0\n');
      const rebuilt = runShell(build, dir, cargoEnv);
      expect(rebuilt.code, rebuilt.output).toBe(0);
      const client = startServer(dir, 'rusty', home.root, env);
      try {
        await client.initialize();
        expect(await client.request('hook/fire', { event: 'pre_tool_use', tool_name: 'bash', args: { command: 'ls' } })).toEqual({
          block: true,
          reason: 'bash is not allowed here',
          user_message: 'blocked by the test',
        });
        expect(await client.request('hook/fire', { event: 'pre_tool_use', tool_name: 'git_push', args: {} })).toEqual({});
        expect((await client.stop()).endedBy).toBe('shutdown');
      } finally {
        client.kill();
      }
    },
    300_000,
  );
});
