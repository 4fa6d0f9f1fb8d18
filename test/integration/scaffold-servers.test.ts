/**
 * The generated python and typescript servers speak YEP v1: a scripted session
 * through the real client covers every request the host sends, and every
 * message they emit validates against schema/yep/v1/schema.json. Then the
 * author's seams: filled-in handlers (a hook that blocks "bash", a tool that
 * streams progress and reads config, a handler that throws or prints) behave.
 * (The rust server gets the same session in test/cli/new.test.ts, after its build.)
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runNew } from '../../src/scaffold/run-new.js';
import { capabilityTokens } from '../../src/scaffold/facets.js';
import { parseScaffoldRequest, type Language, type ScaffoldInput } from '../../src/scaffold/request.js';
import { makeTempHome } from '../helpers/home.js';
import { SCAFFOLD_FULL, realTypescriptBuild } from '../helpers/ts-builds.js';
import { fillHookHandler, inboundProblems, remoteError, runScriptedSession, startServer, transpileTypescriptPackage } from '../helpers/scaffold.js';

const home = makeTempHome('yep-scaffold-');
afterAll(() => home.cleanup());
// `#!/usr/bin/env python3` must find /usr/bin/python3, not a pyenv shim (a shell script run on every start).
const env = { ...home.env, PATH: `/usr/bin:${home.env.PATH}` };
/** Every facet, with a prompt the literal encoders must carry (the package ts-build-full is built from it). */
const FULL = SCAFFOLD_FULL;

const MATRIX: [string, Omit<ScaffoldInput, 'name' | 'language'>][] = [
  ['every facet', FULL],
  ['tools only', { tools: ['only_tool'] }],
  ['a hook only', { hooks: ['pre_tool_use:bash'] }],
  ['status only (no handler at all)', { status: true }],
  ['a static prompt and commands', { prompt: 'Be brief.', commands: ['a', 'b'] }],
];

/** A generated package, ready to start (a TypeScript one transpiled into dist/). */
async function generate(name: string, language: Language, input: Omit<ScaffoldInput, 'name' | 'language'>): Promise<string> {
  const dir = (await runNew({ name, language, ...input }, { cwd: home.root })).dir;
  if (language === 'typescript') await transpileTypescriptPackage(dir);
  return dir;
}

describe.each<Language>(['python', 'typescript'])('%s template', (language) => {
  it.each(MATRIX)('%s: answers every host request correctly; every message conforms to the schema artifact', async (label, input) => {
    const name = `${language}-${label.replace(/[^a-z]+/g, '-').replace(/-$/, '')}`;
    const dir = await generate(name, language, input);
    const spec = parseScaffoldRequest({ name, language, ...input });
    const client = await runScriptedSession(
      dir,
      {
        name,
        capabilities: capabilityTokens(spec),
        tools: spec.tools,
        ...(spec.prompt !== undefined ? { prompt: spec.prompt } : {}),
        hooks: spec.hooks.length > 0,
        dynamicPrompt: spec.dynamicPrompt,
        commands: spec.commands,
        status: spec.status,
      },
      home.root,
      env,
    );
    // The session really exercised the server: a handshake, answers and (with status) a notification.
    expect(client.records.filter((r) => r.direction === 'in').length).toBeGreaterThanOrEqual(6);
    expect(client.stderrTail()).toBe('');
  });

  it('exits on EOF alone, with no shutdown request', async () => {
    const dir = await generate(`${language}-eof`, language, { tools: ['t'] });
    const client = startServer(dir, `${language}-eof`, home.root, env);
    await client.initialize();
    const stop = await client.stop({ shutdown: false, graceMs: 3000 });
    expect(stop).toMatchObject({ endedBy: 'eof', groupGone: true });
    expect(stop.exit?.code).toBe(0);
  });

  it('skips junk lines, answers requests after them, and ignores responses and non-integer ids', async () => {
    const name = `${language}-junk`;
    const dir = await generate(name, language, { tools: ['t'] });
    const input = [
      'not json',
      '[1,2]',
      '{"id": 7, "result": {}}',
      '{"id": "x", "method": "tool/call"}',
      '{"id": 1.5, "method": "tool/call"}',
      '',
      '{"id": 1, "method": "initialize", "params": []}',
      '{"id": 2, "method": "shutdown"}',
      '',
    ].join('\n');
    const r = spawnSync(join(dir, 'bin', name), [], { input, env, encoding: 'utf8', timeout: 10_000 });
    expect(r.status).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number });
    expect(lines.map((l) => l.id)).toEqual([1, 2]);
    expect(r.stderr).toContain('skipping a line that is not JSON');
  });

  it('a filled-in hook handler blocks "bash" and lets everything else through (checked through the YEP client)', async () => {
    const name = `${language}-guard`;
    const dir = await generate(name, language, { hooks: ['pre_tool_use'] });
    fillHookHandler(join(dir, sourceFile(language, name)), language);
    if (language === 'typescript') await transpileTypescriptPackage(dir);
    const client = startServer(dir, name, home.root, env);
    try {
      await client.initialize();
      expect(await client.request('hook/fire', { event: 'pre_tool_use', tool_name: 'bash', args: { command: 'rm -rf /' } })).toEqual({
        block: true,
        reason: 'bash is not allowed here',
        user_message: 'blocked by the test',
      });
      expect(await client.request('hook/fire', { event: 'pre_tool_use', tool_name: 'read_file', args: { path: 'x' } })).toEqual({});
      await client.stop();
      expect(inboundProblems(client)).toEqual([]);
    } finally {
      client.kill();
    }
  });

  it('filled-in handlers: progress streams, config arrives and follows config/changed, secrets come from env, failures and prints stay off the protocol', async () => {
    const name = `${language}-filled`;
    const dir = await generate(name, language, {
      tools: ['work', 'boom'],
      commands: ['bad'],
      dynamicPrompt: true,
      config: ['endpoint', 'token:secret:env=FILLED_TOKEN'],
    });
    const file = join(dir, sourceFile(language, name));
    let text = readFileSync(file, 'utf8');
    if (language === 'python') {
      text = text
        .replace(
          /( {4}if name == "work":\n)[^\n]*\n/,
          '$1        print("chatter on stdout")\n        progress("half way")\n        return text_result("%s %s" % (CONFIG.get("endpoint"), os.environ.get("FILLED_TOKEN")))\n',
        )
        .replace(/( {4}elif name == "boom":\n)[^\n]*\n/, '$1        raise RuntimeError("it broke")\n')
        .replace(/( {4}if name == "bad":\n)[^\n]*\n/, '$1        return ["not", "a", "result"]\n')
        .replace(/( {4}return "")\n/, '    return 42\n');
    } else {
      text = text
        .replace(
          /( {4}case 'work':\n)[^\n]*\n/,
          "$1      console.log('chatter on stdout');\n      progress('half way');\n      return textResult(config.endpoint + ' ' + process.env.FILLED_TOKEN);\n",
        )
        .replace(/( {4}case 'boom':\n)[^\n]*\n/, "$1      throw new Error('it broke');\n")
        .replace(/( {4}case 'bad':\n)[^\n]*\n/, "$1      return ['not', 'a', 'result'] as any;\n")
        .replace(/( {2}return '';)\n/, '  return 42 as any;\n');
    }
    writeFileSync(file, text);
    if (language === 'typescript') await transpileTypescriptPackage(dir);
    const client = YepClientFor(dir, name, { FILLED_TOKEN: 's3cret' });
    try {
      await client.initialize({ config: { endpoint: 'https://a.example' } });
      const updates: string[] = [];
      expect(await client.callTool('work', {}, { onUpdate: (u) => updates.push(u.output) }).result).toEqual({
        content: [{ type: 'text', text: 'https://a.example s3cret' }],
      });
      expect(updates).toEqual(['half way']);
      client.notify('config/changed', { config: { endpoint: 'https://b.example' } });
      expect(await client.callTool('work', {}).result).toEqual({ content: [{ type: 'text', text: 'https://b.example s3cret' }] });
      expect((await remoteError(client.callTool('boom', {}).result)).message).toContain('it broke');
      expect((await remoteError(client.request('command/execute', { name: 'bad', arguments: '' }))).message).toContain('must return');
      expect((await remoteError(client.request('prompt/contribution'))).message).toContain('must return a string');
      // Still alive after all that.
      expect(await client.callTool('work', {}).result).toMatchObject({ content: [{ type: 'text' }] });
      const stop = await client.stop();
      expect(stop.endedBy).toBe('shutdown');
      expect(client.stderrTail()).toContain('chatter on stdout');
      expect(client.stderrTail()).toContain('it broke');
      expect(inboundProblems(client)).toEqual([]);
    } finally {
      client.kill();
    }
  });
});

/** The file an author edits: the TypeScript source, or the Python server itself. */
function sourceFile(language: Language, name: string): string {
  return language === 'typescript' ? 'src/server.ts' : `bin/${name}`;
}

function YepClientFor(dir: string, name: string, injected: Record<string, string>) {
  return startServer(dir, name, home.root, { ...env, ...injected });
}

describe('typescript template', () => {
  it('builds with its own build step (tsc --strict, offline with the toolchain linked in) and runs from any module tree', async () => {
    const full = (await runNew({ name: 'ts-build-full', language: 'typescript', ...FULL }, { cwd: home.root })).dir;
    const bare = (await runNew({ name: 'ts-build-bare', language: 'ts', status: true }, { cwd: home.root })).dir;
    for (const dir of [full, bare]) {
      // Before the build the launcher says what to run, on stderr, and exits non-zero.
      const before = spawnSync(join(dir, 'bin', dir.endsWith('full') ? 'ts-build-full' : 'ts-build-bare'), [], { input: '', env, encoding: 'utf8' });
      expect(before.status).toBe(1);
      expect(before.stderr).toContain('is not built yet: run `npm install && npm run build` in ');
    }
    // tsc --build of both (with the run's other real builds: ../helpers/ts-builds.ts).
    for (const build of [await realTypescriptBuild('ts-build-full', full), await realTypescriptBuild('ts-build-bare', bare)]) {
      expect(build.output).toBe('');
      expect(build.code).toBe(0);
    }
    // Inside a "type": "module" tree the package's own package.json (no "type") keeps it CommonJS.
    writeFileSync(join(home.root, 'package.json'), '{"type": "module"}\n');
    const run = spawnSync(join(full, 'bin', 'ts-build-full'), [], {
      input: '{"id":1,"method":"initialize","params":{}}\n{"id":2,"method":"shutdown"}\n',
      env,
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout.split('\n')[0]).toContain('"name":"ts-build-full"');
  });
});
