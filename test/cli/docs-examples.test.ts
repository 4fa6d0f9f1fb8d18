/**
 * Every example `--help`, the README and docs/agents.md show runs as written: each in its own copy of
 * a home that holds what the examples name (the crates lsp and logfire on a loopback
 * registry, installed; a lock exported to ./yolop-extensions.lock; a profile `work`),
 * from a directory where ./examples is the repository's. An example exits 0 unless the
 * table below says why it may not. A new example that cannot run here must be added to
 * that table with its reason, or fail.
 *
 * Commands run in-process through the dispatcher; the few shell forms the examples use
 * (a `printf … |` into stdin, `> file`, `&& git add`, `$(…)` around the command, `~`)
 * are read here, and nothing else.
 */
import { tmpdir } from 'node:os';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/command-table.js';
import { ROOT_EXAMPLES } from '../../src/cli/help.js';
import { buildCrate, FIXTURE_CRATES, readTree } from '../helpers/crates.js';
import { copyTree, removeTree } from '../helpers/file-walk.js';
import { makeTempHome, REPO_ROOT, runCli, type TempHome } from '../helpers/home.js';
import { FAST_HTTP_ENV, startRegistry, type TestRegistry } from '../helpers/registry.js';

/** Examples that may end otherwise than 0 here, and why. */
const EXPECTED: Record<string, { code: number; why: string }> = {
  'update lsp --accept sha256:3f1c…': { code: 2, why: 'a fingerprint shortened for the page: refused as not a fingerprint' },
  'install https://github.com/acme/yolop-ext.git@v1.2.0': { code: 6, why: 'a placeholder repository on a host this machine cannot reach' },
  'instal lsp': { code: 2, why: 'the README shows the suggestion a typo gets' },
  'outdated --exit-code': { code: 14, why: 'lsp has a newer version within its requirement: exit 14 is the point of the example' },
  'set-secret logfire token': { code: 2, why: 'asks with hidden input; without a terminal it refuses and says to use --stdin' },
};

/** Examples that show the second step of something: what runs first, as written elsewhere. */
const BEFORE: Record<string, string[]> = {
  'install --frozen': ['mirror /mnt/share/yep-mirror --json'],
};

/** README text that names yep-ext but is no command to run here, and why. */
const NOT_RUN: Record<string, string> = {
  'install --force --allow-build <name>': 'a placeholder in docs/agents.md prose',
  install: 'the README quotes the suggestion a typo gets, not a command',
  'remove <name>': 'a placeholder in prose',
  'doctor "$(npm root -g)/yep-ext/examples/echo-node"': 'names a global install; `doctor ./examples/echo-node` is the same from a checkout',
  '--help': 'the root help, checked on one screen by help.test.ts',
};

const LSP = 'yolop-extension-lsp';
const LOGFIRE = 'yolop-extension-logfire';
let reg: TestRegistry;
let home: TempHome;
let cwd: string;

/** The hello fixture (a server that passes doctor) published as `name`. */
function crate(name: string, version: string, yolop: Record<string, unknown> = {}): Buffer {
  const tree = readTree(join(FIXTURE_CRATES, 'yolop-extension-hello'));
  const hello = JSON.parse(Buffer.from(tree['plugin.json']!.content).toString('utf8'));
  const manifest = { ...hello, name, version, description: `${name} (docs example)`, yolop: { ...hello.yolop, ...yolop } };
  const cargo = `[package]\nname = "yolop-extension-${name}"\nversion = "${version}"\nedition = "2021"\n`;
  return buildCrate({ name: `yolop-extension-${name}`, version, files: { ...tree, 'plugin.json': JSON.stringify(manifest, null, 2), 'Cargo.toml': cargo } });
}

const LOGFIRE_CONFIG = {
  config_schema: {
    type: 'object',
    properties: {
      endpoint: { type: 'string' },
      sample_rate: { type: 'number' },
      tags: { type: 'array', items: { type: 'string' } },
      token: { type: 'string', secret: true, env: 'LOGFIRE_TOKEN' },
    },
  },
};

beforeAll(async () => {
  reg = await startRegistry();
  for (const v of ['0.3.0', '0.4.0', '0.4.1']) reg.publish({ name: LSP, vers: v, data: crate('lsp', v), keywords: ['yolop-extension'], description: 'LSP' });
  reg.publish({ name: LSP, vers: '0.5.0', data: crate('lsp', '0.5.0', { engines: { yolop: '>=99' } }), keywords: ['yolop-extension'] });
  for (const v of ['1.2.0', '1.3.0'])
    reg.publish({ name: LOGFIRE, vers: v, data: crate('logfire', v, LOGFIRE_CONFIG), keywords: ['yolop-extension'], description: 'Logfire' });
  home = makeTempHome('yep-docs-examples-');
  cwd = join(home.root, 'work');
  mkdirSync(cwd, { recursive: true });
  symlinkSync(join(REPO_ROOT, 'examples'), join(cwd, 'examples'));
  mkdirSync(join(home.root, 'mnt', 'share'), { recursive: true });
  // The package the README's authoring loop names: a copy of examples/echo-node as my-ext.
  cpSync(join(REPO_ROOT, 'examples', 'echo-node'), join(cwd, 'my-ext'), { recursive: true });
  const manifest = join(cwd, 'my-ext', 'plugin.json');
  writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('"name": "echo-node"', '"name": "my-ext"'));
  mkdirSync(join(home.configDir, 'profiles'), { recursive: true });
  writeFileSync(join(home.configDir, 'profiles', 'work.toml'), '');
  for (const args of [
    ['install', 'lsp@^0.4', '--yes'],
    ['install', 'logfire', '--yes'],
    ['enable', 'logfire'],
    ['install', './my-ext'],
    ['lock', 'export', './yolop-extensions.lock'],
  ]) {
    const r = await runCli(args, { env: env(home.root), cwd });
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  }
}, 60_000);
afterAll(async () => {
  await reg?.close();
  home?.cleanup();
});

function env(root: string): Record<string, string> {
  const moved = Object.fromEntries(Object.entries(home.env).map(([k, v]) => [k, v.split(home.root).join(root)]));
  return { ...moved, ...FAST_HTTP_ENV, YEP_EXT_INDEX: reg.indexUrl, LOGFIRE_TOKEN: 'docs-example-token' };
}

/** Words of a command line, with the quoting and `~` a POSIX shell gives them. */
function words(line: string, vars: Record<string, string>): string[] {
  const out: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === ' ') {
      if (word !== undefined) out.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      const end = line.indexOf('"', i + 1);
      word = (word ?? '') + line.slice(i + 1, end).replace(/\$(\w+)/g, (_, v: string) => vars[v] ?? '');
      i = end;
    } else if (c === '~' && word === undefined && (line[i + 1] === '/' || line[i + 1] === ' ' || i + 1 === line.length)) {
      word = vars.HOME;
    } else word = (word ?? '') + c;
  }
  if (word !== undefined) out.push(word);
  return out;
}

interface Example {
  /** As shown (the part after `yep-ext `). */
  text: string;
  /** Variables set before it (`VAR=value yep-ext …`). */
  vars: Record<string, string>;
  /** What stdin gets (a `printf %s "$VAR" |` before it). */
  input?: string;
  /** Where stdout goes (a `> file` after it). */
  stdoutTo?: string;
}

/** The `yep-ext …` command in a shown line, with the shell around it it uses. */
function example(shown: string): Example | undefined {
  let line = shown
    .replace(/\\\|/g, '|')
    .replace(/\s+#.*$/, '')
    .trim();
  const inSubst = /^eval "\$\((?:npx )?yep-ext ([^)]*)\)"$/.exec(line);
  if (inSubst) return { text: inSubst[1]!, vars: {} };
  let input: string | undefined;
  const piped = /^printf %s "\$(\w+)" \| (.*)$/.exec(line);
  if (piped) {
    input = `$${piped[1]}`;
    line = piped[2]!;
  }
  const m = /^((?:\w+=\S+ )*)(?:npx )?yep-ext (.*)$/.exec(line);
  if (!m) return undefined;
  const vars = Object.fromEntries(
    m[1]!
      .trim()
      .split(' ')
      .filter(Boolean)
      .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
  );
  let text = m[2]!.split(' && ')[0]!.split(' | ')[0]!.trim();
  let stdoutTo: string | undefined;
  const redirect = / > (\S+)$/.exec(text);
  if (redirect) {
    stdoutTo = redirect[1];
    text = text.slice(0, redirect.index);
  }
  return { text, vars, ...(input !== undefined ? { input } : {}), ...(stdoutTo !== undefined ? { stdoutTo } : {}) };
}

function helpExamples(): string[] {
  const out: string[] = [...ROOT_EXAMPLES.map((e) => e.replace('<%= config.bin %>', 'yep-ext'))];
  for (const def of Object.values(COMMANDS)) for (const e of def.examples) out.push(e.replace('<%= config.bin %>', 'yep-ext'));
  return out;
}

/** The command lines of a page: its `sh` blocks and the inline spans that name yep-ext. */
function readmeExamples(page = 'README.md'): string[] {
  const md = readFileSync(join(REPO_ROOT, page), 'utf8');
  const fenced = [...md.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].flatMap((m) => m[1]!.split('\n'));
  const spans = [...md.replace(/^```[\s\S]*?^```$/gm, '').matchAll(/`([^`\n]*yep-ext [^`\n]*)`/g)].map((m) => m[1]!);
  return [...fenced, ...spans].map((l) => l.trim()).filter((l) => /(^|[ |(])yep-ext /.test(l) && !l.startsWith('#'));
}

/** The page an agent reads: every command it shows is one an agent may copy. */
const agentExamples = (): string[] => readmeExamples('docs/agents.md');

const ALL = [...new Set([...helpExamples(), ...readmeExamples(), ...agentExamples()])];

describe('the examples of --help and the README', () => {
  it('are found (the extraction works)', () => {
    expect(helpExamples().length).toBeGreaterThan(60);
    expect(readmeExamples().length).toBeGreaterThan(20);
    expect(agentExamples().length).toBeGreaterThan(12);
  });

  it.each(ALL)('%s', async (shown) => {
    const ex = example(shown);
    const key = ex?.text ?? shown;
    if (NOT_RUN[key] !== undefined || NOT_RUN[shown] !== undefined) return;
    expect(ex, `a README line naming yep-ext that is not a command this test can run: add it to NOT_RUN with why`).toBeDefined();
    const root = mkdtempSync(join(tmpdir(), 'yep-docs-example-'));
    try {
      // The copy takes the fresh name's place.
      rmdirSync(root);
      copyTree(home.root, root);
      const runIn = join(root, 'work');
      // Absolute paths of the examples' own (a mounted share) land in this copy.
      const inCopy = (t: string) => t.replace(/(^| |file:\/\/)\/mnt\//g, `$1${root}/mnt/`);
      const e = { ...env(root), ...Object.fromEntries(Object.entries(ex!.vars).map(([k, v]) => [k, inCopy(v)])) };
      for (const before of BEFORE[ex!.text] ?? []) {
        const b = await runCli(words(inCopy(before), e), { env: env(root), cwd: runIn });
        expect(b.code, `yep-ext ${before}: ${b.stderr}`).toBe(0);
      }
      // An install (not a repair, not --frozen, not of the shipped examples) is shown from a store without it; `new` where the name is free.
      if (/^install (?!--force|--frozen|\.\/examples)/.test(ex!.text)) rmSync(join(root, 'config', 'yolop', 'extensions'), { recursive: true, force: true });
      if (/^new my-ext\b/.test(ex!.text)) rmSync(join(runIn, 'my-ext'), { recursive: true, force: true });
      const argv = words(inCopy(ex!.text), e);
      const input = ex!.input !== undefined ? e[ex!.input.slice(1)] : undefined;
      const r = await runCli(argv, { env: e, cwd: runIn, ...(input !== undefined ? { input } : {}) });
      const expected = EXPECTED[ex!.text]?.code ?? 0;
      expect(r.code, `yep-ext ${ex!.text}\n${r.stdout}\n${r.stderr}`).toBe(expected);
      if (ex!.stdoutTo) {
        const to = resolve(runIn, words(ex!.stdoutTo, e)[0]!);
        mkdirSync(join(to, '..'), { recursive: true });
        writeFileSync(to, r.stdout);
        expect(r.stdout.length).toBeGreaterThan(0);
      }
    } finally {
      removeTree(root);
    }
  });
});
