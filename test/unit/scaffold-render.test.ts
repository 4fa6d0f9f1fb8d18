import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { validateManifest } from '../../src/core/package/manifest-validate.js';
import { capabilityTokens } from '../../src/scaffold/facets.js';
import { jsString, pyString, rustString } from '../../src/scaffold/literals.js';
import { TEMPLATE_PROTOCOL_VERSION, renderManifest } from '../../src/scaffold/manifest.js';
import { buildStep } from '../../src/scaffold/build-step.js';
import { renderScaffold } from '../../src/scaffold/render.js';
import { LANGUAGES, parseScaffoldRequest, type ScaffoldInput } from '../../src/scaffold/request.js';
import { PROTOCOL_VERSION } from '../../src/core/yep/protocol.js';
import { artifactProblems } from '../helpers/scaffold.js';

const FULL: ScaffoldInput = {
  name: 'full',
  tools: ['search', 'fetch'],
  hooks: ['pre_tool_use', 'post_tool_use:git_*'],
  commands: ['deploy'],
  prompt: 'Be brief.',
  dynamicPrompt: true,
  status: true,
  skills: true,
  config: ['endpoint', 'region:env=REGION', 'token:secret:env=TOKEN', 'key:secret'],
};

describe('renderManifest', () => {
  it('declares every requested facet, with host defaults written out, and passes the host rules', () => {
    const m = renderManifest(parseScaffoldRequest(FULL));
    expect(validateManifest(m)).toHaveProperty('manifest');
    expect(m).toMatchObject({ name: 'full', version: '0.1.0' });
    const y = m.yolop as Record<string, unknown>;
    expect(Object.keys(y)).toEqual([
      'protocol_version',
      'capabilityServer',
      'config_schema',
      'tools',
      'prompt',
      'dynamic_prompt',
      'hooks',
      'commands',
      'status',
      'skills',
    ]);
    expect(y.capabilityServer).toEqual({ command: 'full', args: [] });
    expect(y.hooks).toEqual([
      { event: 'pre_tool_use', tool_name_glob: '*', timeout_ms: 5000, on_error: 'warn' },
      { event: 'post_tool_use', tool_name_glob: 'git_*', timeout_ms: 5000, on_error: 'warn' },
    ]);
    expect((y.tools as { name: string }[]).map((t) => t.name)).toEqual(['search', 'fetch']);
    expect((y.commands as { name: string }[]).map((c) => c.name)).toEqual(['deploy']);
    expect(y.config_schema).toEqual({
      type: 'object',
      properties: {
        endpoint: { type: 'string', description: 'TODO: what endpoint is for.' },
        region: { type: 'string', description: 'TODO: what region is for.', env: 'REGION' },
        token: { type: 'string', description: 'TODO: what token is for.', secret: true, env: 'TOKEN' },
        key: { type: 'string', description: 'TODO: what key is for.', secret: true, env: 'FULL_KEY' },
      },
      required: [],
    });
  });

  it.each<[string, Partial<ScaffoldInput>, string[]]>([
    ['tools', { tools: ['t'] }, ['tools']],
    ['a hook', { hooks: ['pre_tool_use:bash'] }, ['hooks']],
    ['a command', { commands: ['c'] }, ['commands']],
    ['a prompt', { prompt: 'p' }, ['prompt']],
    ['a dynamic prompt', { dynamicPrompt: true }, ['dynamic_prompt']],
    ['status', { status: true }, ['status']],
    ['skills', { skills: true }, ['skills']],
    ['skills and config', { skills: true, config: ['a'] }, ['config_schema', 'skills']],
  ])('%s: exactly that facet, nothing else', (_label, facet, keys) => {
    const m = renderManifest(parseScaffoldRequest({ name: 'one', ...facet }));
    expect(Object.keys(m.yolop as object)).toEqual(['protocol_version', 'capabilityServer', ...keys]);
    expect(validateManifest(m)).toHaveProperty('manifest');
  });

  it('speaks the protocol version the schema artifacts are generated for', () => {
    expect(TEMPLATE_PROTOCOL_VERSION).toBe(PROTOCOL_VERSION);
  });
});

describe('capabilityTokens', () => {
  it('one token per server-side facet; streaming with tools; skills and config are manifest-only', () => {
    expect(capabilityTokens(parseScaffoldRequest(FULL))).toEqual(['tools', 'streaming', 'prompt', 'dynamic_prompt', 'hooks', 'commands', 'status']);
    expect(capabilityTokens(parseScaffoldRequest({ name: 'x', skills: true, config: ['a'] }))).toEqual([]);
  });
});

describe('renderScaffold', () => {
  it('python: one executable server in bin/, plus manifest, README and (with --skills) a SKILL.md; no build', () => {
    const spec = parseScaffoldRequest({ ...FULL, language: 'python' });
    const files = renderScaffold(spec);
    expect(Object.keys(files).sort()).toEqual(['README.md', 'bin/full', 'plugin.json', 'skills/full/SKILL.md']);
    expect(files['bin/full']!.mode).toBe(0o755);
    expect(files['plugin.json']!.mode).toBe(0o644);
    expect(files['bin/full']!.content.split('\n')[0]).toBe('#!/usr/bin/env python3');
    expect(buildStep(spec)).toBeUndefined();
  });

  it('typescript: TypeScript source, a package.json whose main is the compiled server, and a launcher in bin/', () => {
    const spec = parseScaffoldRequest({ ...FULL, language: 'ts' });
    const files = renderScaffold(spec);
    expect(Object.keys(files).sort()).toEqual([
      '.gitignore',
      'README.md',
      'bin/full',
      'package.json',
      'plugin.json',
      'skills/full/SKILL.md',
      'src/server.ts',
      'tsconfig.json',
    ]);
    expect(files['bin/full']!.mode).toBe(0o755);
    expect(files['bin/full']!.content.split('\n')[0]).toBe('#!/usr/bin/env node');
    expect(files['src/server.ts']!.content).toContain('async function handleTool(name: string, args: any, progress: (text: string) => void): Promise<unknown>');
    const pkg = JSON.parse(files['package.json']!.content);
    expect(pkg).toMatchObject({ name: 'yolop-extension-full', private: true, main: 'dist/server.js', scripts: { build: 'tsc -p .' } });
    expect(pkg.type).toBeUndefined();
    expect(Object.keys(pkg.devDependencies).sort()).toEqual(['@types/node', 'typescript']);
    expect(pkg.dependencies).toBeUndefined();
    expect(JSON.parse(files['tsconfig.json']!.content).compilerOptions).toMatchObject({ strict: true, rootDir: 'src', outDir: 'dist' });
    expect(buildStep(spec)).toMatchObject({ command: 'npm install && npm run build' });
    expect(buildStep(spec)!.needs).toContain('npm registry');
    expect(files['README.md']!.content).toContain('npm install && npm run build');
  });

  it('rust: a crate depending on serde_json only, bin/ kept for the build step', () => {
    const spec = parseScaffoldRequest({ ...FULL, language: 'rust' });
    const files = renderScaffold(spec);
    expect(Object.keys(files).sort()).toEqual(['.gitignore', 'Cargo.toml', 'README.md', 'bin/.gitkeep', 'plugin.json', 'skills/full/SKILL.md', 'src/main.rs']);
    expect(files['Cargo.toml']!.content).toMatch(/\[dependencies\]\nserde_json = "1"\n\n\[workspace\]\n$/);
    expect(buildStep(spec)).toMatchObject({ command: 'cargo build --release && cp target/release/full bin/' });
    expect(buildStep(spec)!.needs).toContain('serde_json');
    expect(files['README.md']!.content).toContain('serde_json crate: the first build downloads it from crates.io');
    expect(files['README.md']!.content).toContain('cargo build --release && cp target/release/full bin/');
    expect(files['src/main.rs']!.content).toContain('fn handle_tool(');
  });

  it.each(LANGUAGES)('%s: the handler seams are named and marked, one per declared facet', (language) => {
    const files = renderScaffold(parseScaffoldRequest({ ...FULL, language }));
    const source = { rust: 'src/main.rs', typescript: 'src/server.ts', python: 'bin/full' }[language];
    const server = files[source]!.content;
    const names =
      language === 'typescript'
        ? ['handleTool', 'handleHook', 'handlePrompt', 'handleCommand']
        : ['handle_tool', 'handle_hook', 'handle_prompt', 'handle_command'];
    for (const n of names) expect(server).toMatch(new RegExp(`(function|def|fn) ${n}\\(`));
    expect(server).toContain('YOUR CODE');
    const bare = renderScaffold(parseScaffoldRequest({ name: 'full', language, status: true }));
    const bareServer = bare[source]!.content;
    for (const n of names) expect(bareServer).not.toContain(`${n}(`);
    expect(bareServer).toContain('nothing to handle');
  });

  it('README: what to edit for every facet, and the test commands', () => {
    const readme = renderScaffold(parseScaffoldRequest({ ...FULL, language: 'python' }))['README.md']!.content;
    for (const text of [
      'handle_tool',
      'handle_hook',
      'handle_prompt',
      'handle_command',
      'set_status',
      'skills/full/SKILL.md',
      'yep-ext set-secret full token',
      '$TOKEN',
      'yep-ext doctor ./full',
      'yep-ext install ./full',
      'yep-ext enable full',
      'yep-ext doctor full',
    ]) {
      expect(readme).toContain(text);
    }
  });

  it('the SKILL.md front matter is valid YAML whatever the name (quoted)', () => {
    const skill = renderScaffold(parseScaffoldRequest({ name: 'true', skills: true }))['skills/true/SKILL.md']!.content;
    expect(skill).toMatch(/^---\nname: "true"\ndescription: "TODO: [^"]*"\n---\n/);
  });

  it('renders the same bytes every time', () => {
    expect(renderScaffold(parseScaffoldRequest(FULL))).toEqual(renderScaffold(parseScaffoldRequest(FULL)));
  });
});

const NASTY = [
  '',
  'plain',
  'quote " and \' and `back`',
  'back\\slash \\n not a newline',
  'new\nline\ttab\r',
  'Ünïcödé 中文 😀 \u2028\u2029',
  '${x} %s {} {{}} #{y} \\u0041',
  '\u0000 nul \u001b esc \u007f del',
];

describe('string literals carry any text exactly, as ASCII', () => {
  it.each(NASTY)('javascript %j', (text) => {
    const literal = jsString(text);
    expect(literal).toMatch(/^[\x20-\x7e]*$/);
    expect(new Function(`return ${literal};`)()).toBe(text);
  });

  it('python (one interpreter run for all cases)', () => {
    for (const text of NASTY) expect(pyString(text)).toMatch(/^[\x20-\x7e]*$/);
    const program = `import json, sys\nsys.stdout.write(json.dumps([${NASTY.map(pyString).join(', ')}]))\n`;
    const r = spawnSync('/usr/bin/python3', ['-c', program], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual(NASTY);
  });

  it.each(NASTY)('rust %j (escapes checked by form; rustc compiles them in the rust build test)', (text) => {
    const literal = rustString(text);
    expect(literal).toMatch(/^[\x20-\x7e]*$/);
    // Decode Rust's escapes by hand: \u{…}, \n, \r, \t, \\, \".
    const decoded = literal
      .slice(1, -1)
      .replace(/\\(u\{([0-9a-f]+)\}|n|r|t|\\|")/g, (_m, e: string, hex?: string) =>
        hex ? String.fromCodePoint(parseInt(hex, 16)) : ({ n: '\n', r: '\r', t: '\t', '\\': '\\', '"': '"' } as Record<string, string>)[e]!,
      );
    expect(decoded).toBe(text);
  });
});

describe('artifactProblems (the test helper that judges servers by schema.json)', () => {
  const rec = (message: unknown, kind: 'response' | 'notification', method?: string) => ({
    seq: 1,
    at: 0,
    direction: 'in' as const,
    kind,
    ...(method ? { method } : {}),
    message,
    problems: [],
    notes: [],
  });
  it('passes conforming messages and catches wrong ones', () => {
    expect(artifactProblems(rec({ method: 'status/changed', params: { status: 'ready', level: 'ok' } }, 'notification'))).toEqual([]);
    expect(artifactProblems(rec({ method: 'status/changed', params: { status: 'ready', level: 'loud' } }, 'notification'))).not.toEqual([]);
    expect(artifactProblems(rec({ id: 1, result: { block: 'yes' } }, 'response', 'hook/fire'))).not.toEqual([]);
    expect(artifactProblems(rec({ id: 1, result: { text: 5 } }, 'response', 'prompt/contribution'))).not.toEqual([]);
    expect(artifactProblems(rec({ id: 1, error: { code: 'x' } }, 'response', 'tool/call'))).not.toEqual([]);
    expect(artifactProblems(rec({ jsonrpc: '2.0', id: 1, result: {} }, 'response', 'shutdown'))).toEqual(['carries a jsonrpc member']);
    expect(artifactProblems(rec({ method: 'initialize', params: {} }, 'notification'))).toEqual([
      'the server sent initialize, which is not a server-direction method',
    ]);
  });
});
