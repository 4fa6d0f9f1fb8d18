/**
 * Helpers for the `new` tests: a scripted YEP session against a generated server
 * that checks every message it emits against the published schema artifact
 * (schema/yep/v1/schema.json, through ajv), edits of the generated handlers, and
 * the question of whether a Rust crate can be built offline here.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'vitest';
import { YepClient, YepRequestError, type MessageRecord } from '../../src/core/yep/client.js';
import type { Language } from '../../src/scaffold/request.js';
import { REPO_ROOT } from './home.js';
import { testCacheDir } from './test-cache.js';

type Validator = ((value: unknown) => boolean) & { errors?: unknown };
const schema = JSON.parse(readFileSync(join(REPO_ROOT, 'schema/yep/v1/schema.json'), 'utf8')) as {
  $defs: Record<string, unknown>;
  error: Record<string, unknown>;
  messages: Record<string, { params?: Record<string, unknown>; result?: Record<string, unknown> }>;
};
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
const validators = new Map<string, Validator>();
function validatorFor(key: string, node: Record<string, unknown>): Validator {
  if (!validators.has(key)) validators.set(key, ajv.compile({ ...node, $defs: schema.$defs }) as Validator);
  return validators.get(key)!;
}

const SERVER_METHODS = new Set(['tool/update', 'status/changed', 'log', 'ui/ask']);

/**
 * Problems of one message the server sent, judged by the schema artifact alone:
 * the envelope (integer ids, no `jsonrpc`), the payload of every notification and
 * result the schema describes, and every error object.
 */
export function artifactProblems(rec: MessageRecord): string[] {
  if (rec.kind === 'malformed') return [`malformed line: ${rec.problems.join('; ')}`];
  const msg = rec.message as Record<string, unknown> | undefined;
  if (!msg) return ['message not recorded'];
  const out: string[] = [];
  if ('jsonrpc' in msg) out.push('carries a jsonrpc member');
  const check = (key: string, node: Record<string, unknown> | undefined, value: unknown, what: string): void => {
    if (!node) return;
    const v = validatorFor(key, node);
    if (!v(value)) out.push(`${what}: ${JSON.stringify(v.errors)}`);
  };
  if (rec.kind === 'response') {
    if (!Number.isInteger(msg.id)) out.push('response id is not an integer');
    if ('error' in msg && msg.error !== null && msg.error !== undefined) check('error', schema.error, msg.error, 'error object');
    else if (!('result' in msg)) out.push('response without result or error');
    else check(`${rec.method} result`, schema.messages[rec.method ?? '']?.result, msg.result, `${rec.method} result`);
  } else {
    if (!SERVER_METHODS.has(String(msg.method))) out.push(`the server sent ${String(msg.method)}, which is not a server-direction method`);
    check(`${msg.method} params`, schema.messages[String(msg.method)]?.params, msg.params ?? {}, `${msg.method} params`);
  }
  return out;
}

/** Every inbound record with its problems: by the artifact and by the client's own (zod) checks. */
export function inboundProblems(client: YepClient): string[] {
  return client.records
    .filter((r) => r.direction === 'in')
    .flatMap((r) => [...artifactProblems(r), ...r.problems].map((p) => `#${r.seq} ${r.kind} ${r.method ?? ''}: ${p}`));
}

export interface SessionExpectation {
  name: string;
  capabilities: string[];
  tools: string[];
  prompt?: string;
  hooks: boolean;
  dynamicPrompt: boolean;
  commands: string[];
  status: boolean;
}

/** The remote error of a failed request (the test fails if it succeeded or failed otherwise). */
export async function remoteError(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  const e = await p.then(
    (v) => {
      throw new Error(`expected an error answer, got ${JSON.stringify(v)}`);
    },
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(YepRequestError);
  const r = e as YepRequestError;
  expect(r.kind).toBe('remote');
  return { code: r.remote!.code, message: r.remote!.message };
}

/** Start a generated package's server the way the host does (bare command, bin/ first on PATH). */
export function startServer(
  dir: string,
  name: string,
  workspaceRoot: string,
  env: Record<string, string>,
  onNotification?: (method: string, params: unknown) => void,
): YepClient {
  return YepClient.start({ command: name, packageDir: dir, workspaceRoot, env }, { requestTimeoutMs: 10_000, ...(onNotification ? { onNotification } : {}) });
}

/**
 * Drive a freshly generated (unedited) server through every request the host can
 * send, then shutdown. Asserts the answers and returns the client for its records.
 */
export async function runScriptedSession(dir: string, expected: SessionExpectation, workspaceRoot: string, env: Record<string, string>): Promise<YepClient> {
  const notifications: [string, unknown][] = [];
  const client = startServer(dir, expected.name, workspaceRoot, env, (m, p) => notifications.push([m, p]));
  try {
    const init = await client.initialize({ session_id: 's1', workspace_root: workspaceRoot, config: { endpoint: 'https://x.example' } });
    expect(init.protocol_version).toBe('1.0');
    expect(init.name).toBe(expected.name);
    expect(init.capabilities).toEqual(expected.capabilities);
    expect(init.capability_params?.tools?.map((t) => t.name)).toEqual(expected.tools);
    expect(init.capability_params?.prompt?.static ?? undefined).toBe(expected.prompt);
    client.notify('config/changed', { config: { endpoint: 'https://y.example' } });
    client.notify('workspace/changed', { workspace_root: workspaceRoot });
    client.notify('trace/event', { id: 'e1', event_type: 'turn.started', session_id: 's1', ts: new Date().toISOString() });
    client.notify('some/future-notification', { x: 1 });

    for (const tool of expected.tools) {
      const r = (await client.callTool(tool, { input: 'hi' }).result) as { content: { type: string; text: string }[] };
      expect(r.content[0]!.text).toContain(`TODO: implement ${tool}`);
      expect(r.content[0]!.text).toContain('hi');
    }
    const unknownTool = await remoteError(client.callTool('no_such_tool', {}).result);
    expect(unknownTool.code).toBe(expected.tools.length ? -32602 : -32601);
    expect(unknownTool.message).toContain(expected.tools.length ? 'unknown tool' : 'method not found');

    if (expected.hooks) {
      expect(await client.request('hook/fire', { event: 'pre_tool_use', tool_name: 'bash', args: { command: 'ls' } })).toEqual({});
      expect(await client.request('hook/fire', { event: 'post_tool_use', tool_name: 'bash' })).toEqual({});
    } else expect((await remoteError(client.request('hook/fire', { event: 'pre_tool_use', tool_name: 'bash', args: {} }))).code).toBe(-32601);

    if (expected.dynamicPrompt) expect(await client.request('prompt/contribution')).toEqual({ text: '' });
    else expect((await remoteError(client.request('prompt/contribution'))).code).toBe(-32601);

    for (const command of expected.commands) {
      const r = (await client.request('command/execute', { name: command, arguments: 'now please' })) as { success: boolean; message: string };
      expect(r.success).toBe(true);
      expect(r.message).toContain(`TODO: implement /${expected.name}:${command}`);
      expect(r.message).toContain('now please');
    }
    if (expected.commands.length) expect(await client.request('command/execute', { name: 'nope', arguments: '' })).toMatchObject({ success: false });

    expect(await client.cancel(424242)).toEqual({ cancelled: false, supported: false });
    expect((await remoteError(client.request('no/such-method', {}))).code).toBe(-32601);
    // A request without params and one with junk params are still answered.
    expect((await remoteError(client.request('another/unknown'))).code).toBe(-32601);

    const stop = await client.stop({ graceMs: 3000 });
    expect(stop).toMatchObject({ endedBy: 'shutdown', shutdown: 'answered', groupGone: true });
    expect(stop.exit).toMatchObject({ code: 0 });
    const shutdownAnswer = client.records.find((r) => r.direction === 'in' && r.method === 'shutdown');
    expect((shutdownAnswer?.message as { result?: unknown })?.result).toEqual({});
    expect(notifications.filter(([m]) => m === 'status/changed')).toEqual(expected.status ? [['status/changed', { status: 'ready', level: 'ok' }]] : []);
    expect(inboundProblems(client)).toEqual([]);
    return client;
  } finally {
    client.kill();
  }
}

/** Text inserted at the top of the hook handler so it blocks the tool named "bash". */
const HOOK_BLOCK: Record<Language, { anchor: RegExp; insert: string }> = {
  python: {
    anchor: /( {4}return allow\(\)\n)/,
    insert: '    if tool_name == "bash":\n        return block("bash is not allowed here", "blocked by the test")\n',
  },
  typescript: { anchor: /( {2}return allow\(\);\n)/, insert: "  if (toolName === 'bash') return block('bash is not allowed here', 'blocked by the test');\n" },
  rust: {
    anchor: /( {4}Ok\(allow\(\)\)\n)/,
    insert: '    if tool_name == "bash" {\n        return Ok(block("bash is not allowed here", Some("blocked by the test")));\n    }\n',
  },
};

/** Fill in the generated hook handler (the author's seam) so that it blocks "bash". */
export function fillHookHandler(file: string, language: Language): void {
  const text = readFileSync(file, 'utf8');
  const { anchor, insert } = HOOK_BLOCK[language];
  const matches = text.match(new RegExp(anchor.source, 'g')) ?? [];
  expect(matches, `exactly one default hook body in ${file}`).toHaveLength(1);
  writeFileSync(file, text.replace(anchor, `${insert}$1`));
}

const DEBIAN_REGISTRY = '/usr/share/cargo/registry';

/** `missing`: what this machine lacks and how to get it (for tests/helpers/needs.ts). */
export type RustBuild = { ok: true; how: string } | { ok: false; missing: string };

/**
 * Can a serde_json crate be built offline here? Either serde_json is in the
 * cargo cache, or Debian's packaged crates (/usr/share/cargo/registry, from
 * librust-serde-json-dev) can stand in for crates.io. In the latter case
 * `prepareRustRoot` writes a .cargo/config.toml above the packages so the
 * generated build step runs unchanged.
 */
export function detectRustBuild(): RustBuild {
  const cargo = spawnSync('cargo', ['--version'], { encoding: 'utf8' });
  if (cargo.status !== 0) return { ok: false, missing: 'cargo (https://rustup.rs)' };
  const cargoHome = process.env.CARGO_HOME ?? join(process.env.HOME ?? '/root', '.cargo');
  const cache = join(cargoHome, 'registry', 'cache');
  const cached = existsSync(cache) && readdirSync(cache).some((index) => readdirSync(join(cache, index)).some((f) => /^serde_json-1\./.test(f)));
  if (cached) return { ok: true, how: 'cargo-cache' };
  if (existsSync(DEBIAN_REGISTRY) && readdirSync(DEBIAN_REGISTRY).some((f) => /^serde_json-1\./.test(f))) return { ok: true, how: 'debian' };
  return {
    ok: false,
    missing: `serde_json for an offline cargo build, in the cargo cache (${cache}) or in ${DEBIAN_REGISTRY} (Debian package librust-serde-json-dev)`,
  };
}

/** Make builds under `root` offline (and point crates.io at Debian's crates when that is the source). */
export function prepareRustRoot(root: string, build: RustBuild): void {
  if (!build.ok) return;
  mkdirSync(join(root, '.cargo'), { recursive: true });
  const debian = build.how === 'debian' ? `[source.crates-io]\nreplace-with = "debian"\n\n[source.debian]\ndirectory = "${DEBIAN_REGISTRY}"\n\n` : '';
  writeFileSync(join(root, '.cargo', 'config.toml'), `${debian}[net]\noffline = true\n`);
}

/** The config prepareRustRoot writes: where crates come from, and offline. */
function rustRootConfig(root: string): string {
  const file = join(root, '.cargo', 'config.toml');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

/**
 * Where the compiled dependencies of a generated crate are kept between runs, named by
 * everything that decides them: the toolchain, the crate's Cargo.toml, the cargo config
 * above it (the source crates come from), and the crates that source holds.
 */
function rustDepsCache(crateDir: string, root: string, build: RustBuild & { ok: true }): string {
  const toolchain = ['cargo', 'rustc'].map((tool) => spawnSync(tool, ['-vV'], { encoding: 'utf8' }).stdout).join('\n');
  const source = build.how === 'debian' ? readdirSync(DEBIAN_REGISTRY).sort().join('\n') : build.how;
  const key = createHash('sha256')
    .update([toolchain, readFileSync(join(crateDir, 'Cargo.toml'), 'utf8'), rustRootConfig(root), source].join('\0'))
    .digest('hex')
    .slice(0, 24);
  return testCacheDir('cargo-deps', key);
}

/** What in target/ belongs to the crate itself (its package and bin names), not to its dependencies. */
function ownArtifacts(crateDir: string): RegExp {
  const toml = readFileSync(join(crateDir, 'Cargo.toml'), 'utf8');
  const names = [...toml.matchAll(/^name = "([^"]+)"$/gm)].flatMap((m) => [m[1]!, m[1]!.replace(/-/g, '_')]);
  return new RegExp(`^(${names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})([-.]|$)`);
}

/**
 * Seed a generated crate's target/ with its dependencies as an earlier run compiled them
 * (none on the first run), so its build step compiles the crate itself only, as a second
 * build on an author's machine does. Nothing of the crate is seeded, and cargo's own
 * fingerprints decide what of the seed it uses: a dependency they do not match is rebuilt.
 * Returns the function that keeps the dependencies of a finished build for the next run.
 */
export function seedRustDependencies(crateDir: string, root: string, build: RustBuild): () => void {
  if (!build.ok) return () => {};
  const cache = rustDepsCache(crateDir, root, build);
  const target = join(crateDir, 'target');
  if (existsSync(cache)) cpSync(cache, target, { recursive: true, preserveTimestamps: true });
  return () => {
    if (existsSync(cache) || !existsSync(target)) return;
    const own = ownArtifacts(crateDir);
    const staging = `${cache}.${process.pid}-${Date.now()}`;
    cpSync(target, staging, {
      recursive: true,
      preserveTimestamps: true,
      filter: (src) => {
        const parts = src.slice(target.length + 1).split('/');
        // target/<profile>/<name> and target/<profile>/{deps,build,.fingerprint}/<name>; incremental state is the crate's own.
        return !parts.includes('incremental') && !parts.slice(1, 3).some((p) => own.test(p));
      },
    });
    try {
      renameSync(staging, cache);
    } catch {
      // Another run kept the same dependencies first.
      rmSync(staging, { recursive: true, force: true });
    }
  };
}

const TYPESCRIPT_VERSION: string = JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', 'typescript', 'package.json'), 'utf8')).version;
/** The transpiler's options, by name: the cache key is made from this very object, so the two cannot drift apart. */
const TRANSPILE_OPTIONS = { module: 'commonjs', target: 'es2022' } as const;

/**
 * Build a generated TypeScript package the fast way: TypeScript's transpiler, in this
 * process, writes dist/server.js (no type check). The real build (tsc --strict) runs in
 * its own tests: transpiling stands in for it where a test is about the server's behaviour,
 * not the build (a tsc process per package costs seconds). The output is kept in the test
 * cache by the source and the settings, so a source transpiled before is not again (loading
 * the compiler into this process costs more than the transpiling).
 */
export async function transpileTypescriptPackage(dir: string): Promise<void> {
  const source = readFileSync(join(dir, 'src', 'server.ts'), 'utf8');
  const key = createHash('sha256')
    .update(`typescript ${TYPESCRIPT_VERSION}\0${JSON.stringify(TRANSPILE_OPTIONS)}\0${source}`)
    .digest('hex')
    .slice(0, 24);
  const cached = testCacheDir('ts-transpile', `${key}.js`);
  if (!existsSync(cached)) {
    const ts = (await import('typescript')).default;
    const { options } = ts.convertCompilerOptionsFromJson(TRANSPILE_OPTIONS, dir);
    const out = ts.transpileModule(source, { compilerOptions: options });
    mkdirSync(dirname(cached), { recursive: true });
    const staging = `${cached}.${process.pid}-${Date.now()}`;
    writeFileSync(staging, out.outputText);
    renameSync(staging, cached);
  }
  mkdirSync(join(dir, 'dist'), { recursive: true });
  cpSync(cached, join(dir, 'dist', 'server.js'));
}

/**
 * The real build of generated TypeScript packages (tsc --strict, offline with the toolchain
 * linked in), all in one tsc process: `tsc --build` compiles each package by its own
 * tsconfig.json, as the package's build step does (asserted here: `npm run build` runs
 * `tsc -p .`), and reads the standard library and @types/node, most of a tsc run's work,
 * once for all of them instead of once per package. Returns tsc's status and its output
 * (empty when every package is clean).
 */
export function buildTypescriptPackages(dirs: string[]): { code: number | null; output: string } {
  for (const dir of dirs) {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts?: { build?: string } };
    expect(pkg.scripts?.build, `the build step of ${dir}`).toBe('tsc -p .');
    if (!existsSync(join(dir, 'node_modules'))) linkTypescriptToolchain(dir);
  }
  const r = spawnSync(join(REPO_ROOT, 'node_modules', '.bin', 'tsc'), ['--build', ...dirs], { encoding: 'utf8', timeout: 300_000 });
  return { code: r.status, output: `${r.stdout}${r.stderr}` };
}

/**
 * Make `npm run build` work offline in a generated TypeScript package: its dev
 * dependencies (typescript, @types/node) are this repository's, linked in as
 * node_modules, so the printed build step runs as written minus the download.
 */
export function linkTypescriptToolchain(dir: string): void {
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
}

/** Run a shell command line (the printed build step) in `cwd`. */
export function runShell(line: string, cwd: string, env: Record<string, string>): { code: number | null; output: string } {
  const r = spawnSync('sh', ['-c', line], { cwd, env, encoding: 'utf8', timeout: 300_000 });
  return { code: r.status, output: `${r.stdout}${r.stderr}` };
}
