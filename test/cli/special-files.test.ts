/**
 * Special files never hang the CLI. Each state file a command
 * reads (the lock, settings.toml, connections.toml, the keychain index, an approved
 * grant, an installed plugin.json, a path package's plugin.json, an index cache
 * entry) is replaced in turn by a FIFO, a socket, a directory, a symlink to
 * /dev/null and a dangling symlink; every command that reads it must finish (the
 * runner kills it after TIMEOUT_MS: a kill is a failure, never a hang of the
 * suite) and refuse with exit 7 naming the file and what it is, or, where the
 * command deliberately degrades (list, remove), report it and go on. The special
 * file is left as it was, and so is every other state file.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonOf, makeTempHome, runCli, type RunResult, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { buildCrate } from '../helpers/crates.js';
import { FAST_HTTP_ENV, startRegistry, type TestRegistry } from '../helpers/registry.js';

const TIMEOUT_MS = 15_000;

type Kind = 'fifo' | 'socket' | 'directory' | 'device-link' | 'dangling-link';
const KINDS: Kind[] = ['fifo', 'socket', 'directory', 'device-link', 'dangling-link'];

/** Replace `file` by a special file of `kind`. */
function makeSpecial(file: string, kind: Kind): void {
  rmSync(file, { recursive: true, force: true });
  mkdirSync(dirname(file), { recursive: true });
  switch (kind) {
    case 'fifo':
      execFileSync('mkfifo', [file]);
      break;
    case 'socket': {
      // A process that binds the socket and exits leaves the socket file behind. Bound
      // under a short path (sun_path holds 108 bytes) and then renamed into place.
      const short = mkdtempSync(join(tmpdir(), 'yep-sock-'));
      const r = spawnSync(process.execPath, ['-e', 'require("net").createServer().listen(process.argv[1], () => process.exit(0))', join(short, 's')]);
      expect(r.status, String(r.stderr)).toBe(0);
      renameSync(join(short, 's'), file);
      rmSync(short, { recursive: true });
      break;
    }
    case 'directory':
      mkdirSync(file);
      break;
    case 'device-link':
      symlinkSync('/dev/null', file);
      break;
    case 'dangling-link':
      symlinkSync(join(dirname(file), 'nowhere-at-all'), file);
      break;
  }
}

function kindOf(st: Stats): string {
  return st.isFIFO() ? 'fifo' : st.isSocket() ? 'socket' : st.isDirectory() ? 'directory' : st.isSymbolicLink() ? 'link' : st.isFile() ? 'file' : 'other';
}

/** What the message must say the file is. `follow`: the reader follows symlinks to a regular file. */
function saysKind(kind: Kind, follow: boolean): RegExp {
  switch (kind) {
    case 'fifo':
      return /is a FIFO \(named pipe\), not a regular file/;
    case 'socket':
      return /is a socket, not a regular file/;
    case 'directory':
      return /is a directory, not a regular file/;
    case 'device-link':
      return follow
        ? /is a symbolic link to a character device \(\/dev\/null\), not a regular file/
        : /is a symbolic link \(to \/dev\/null\), not a regular file/;
    case 'dangling-link':
      return follow
        ? /is a dangling symbolic link \(to .*nowhere-at-all, which does not exist\), not a regular file/
        : /is a (dangling )?symbolic link \(to .*nowhere-at-all/;
  }
}

const SCHEMA = { type: 'object', properties: { token: { type: 'string', secret: true, env: 'DEMO_TOKEN' } } };

interface Home {
  root: string;
  configDir: string;
  store: string;
  env: Record<string, string>;
}

function homeOf(t: TempHome): Home {
  return { root: t.root, configDir: t.configDir, store: join(t.configDir, 'extensions'), env: { ...t.env, YEP_EXT_SECRET_STORE: 'file' } };
}

/**
 * A home with `demo` installed from a path, enabled, given a secret, with a keychain
 * index and an approved grant: made once through the CLI, then copied per case
 * (the copy's store link and lock are pointed at the copy's package source).
 */
let template: TempHome;
const clones: TempHome[] = [];

async function makeTemplate(): Promise<void> {
  template = makeTempHome('yep-special-tpl-');
  const h = homeOf(template);
  writePackage(join(h.root, 'src', 'demo'), { name: 'demo', yolop: { config_schema: SCHEMA } });
  writePackage(join(h.root, 'src', 'other'), { name: 'other' });
  for (const args of [
    ['install', join(h.root, 'src', 'demo')],
    ['enable', 'demo'],
  ]) {
    const r = await runCli(args, { env: h.env, timeoutMs: TIMEOUT_MS });
    expect(r.code, r.stderr).toBe(0);
  }
  const s = await runCli(['set-secret', 'demo', 'token', '--stdin'], { env: h.env, input: 'tok-123', timeoutMs: TIMEOUT_MS });
  expect(s.code, s.stderr).toBe(0);
  writeFileSync(join(h.store, '.yep-keychain.json'), `${JSON.stringify({ version: 1, entries: {} }, null, 2)}\n`);
  expect(existsSync(join(h.store, '.yep-grants', 'demo.json'))).toBe(true);
}

function cloneHome(): Home {
  const t = makeTempHome('yep-special-');
  clones.push(t);
  cpSync(template.root, t.root, { recursive: true, verbatimSymlinks: true });
  const h = homeOf(t);
  const link = join(h.store, 'demo');
  const target = readlinkSync(link).replace(template.root, t.root);
  unlinkSync(link);
  symlinkSync(target, link);
  const lock = join(h.store, 'extensions.lock');
  writeFileSync(lock, readFileSync(lock, 'utf8').replaceAll(template.root, t.root));
  return h;
}

/** Bytes (or kind) of every state file, to assert that a refusal changed nothing. */
function snapshot(h: Home): Record<string, string> {
  const files = {
    lock: join(h.store, 'extensions.lock'),
    settings: join(h.configDir, 'settings.toml'),
    secrets: join(h.configDir, 'connections.toml'),
    keychain: join(h.store, '.yep-keychain.json'),
    grant: join(h.store, '.yep-grants', 'demo.json'),
    manifest: join(h.root, 'src', 'demo', 'plugin.json'),
  };
  const out: Record<string, string> = {};
  for (const [k, p] of Object.entries(files)) {
    let st: Stats | undefined;
    try {
      st = lstatSync(p);
    } catch {
      st = undefined;
    }
    out[k] = st === undefined ? 'missing' : st.isFile() ? readFileSync(p, 'latin1') : `${kindOf(st)}${st.isSymbolicLink() ? ` -> ${readlinkSync(p)}` : ''}`;
  }
  out.store = readdirSync(h.store).sort().join(',');
  return out;
}

interface Expectation {
  args: (h: Home) => string[];
  input?: string;
  /** Refused (exit 7, message on stderr) or reported while the command goes on. */
  outcome: 'refused' | 'reported-by-list' | 'warned-by-remove';
  /** Set up what makes the command reach the file (e.g. a changed manifest). */
  prepare?: (h: Home) => void;
}

interface FileCase {
  name: string;
  path: (h: Home) => string;
  /** Other names the same file may be reported under (through the store's link to a path package). */
  aliases?: (h: Home) => string[];
  /** The reader follows a symlink to a regular file (the host reads these through links). */
  follow: boolean;
  commands: Expectation[];
}

const addTool = (h: Home): void => {
  const file = join(h.root, 'src', 'demo', 'plugin.json');
  const m = JSON.parse(readFileSync(file, 'utf8'));
  m.yolop.tools.push({ name: 'added_tool' });
  writeFileSync(file, JSON.stringify(m, null, 2));
};

const list: Expectation = { args: () => ['list', '--json'], outcome: 'reported-by-list' };
const enable: Expectation = { args: () => ['enable', 'demo'], outcome: 'refused' };
const disable: Expectation = { args: () => ['disable', 'demo'], outcome: 'refused' };
const remove: Expectation = { args: () => ['remove', 'demo'], outcome: 'refused' };
const setSecret: Expectation = { args: () => ['set-secret', 'demo', 'token', '--stdin'], input: 'tok-456', outcome: 'refused' };
const doctor: Expectation = { args: () => ['doctor', 'demo'], outcome: 'refused' };
/** `doctor <dir>`: the road that starts the server early reads the manifest, and the config files an env-mapped field may come from. */
const doctorDir = (pkg: string): Expectation => ({ args: (h) => ['doctor', join(h.root, 'src', pkg)], outcome: 'refused' });
const update: Expectation = { args: () => ['update', 'demo', '--yes'], outcome: 'refused' };
const installOther: Expectation = { args: (h) => ['install', join(h.root, 'src', 'other')], outcome: 'refused' };

const FILES: FileCase[] = [
  {
    name: 'extensions.lock',
    path: (h) => join(h.store, 'extensions.lock'),
    follow: true,
    // enable, disable, set-secret and doctor never read the lock.
    commands: [{ ...list, outcome: 'refused' }, installOther, remove, update],
  },
  {
    name: 'settings.toml',
    path: (h) => join(h.configDir, 'settings.toml'),
    follow: true,
    commands: [list, enable, disable, doctor, doctorDir('demo'), { ...remove, outcome: 'warned-by-remove' }],
  },
  {
    name: 'connections.toml',
    path: (h) => join(h.configDir, 'connections.toml'),
    follow: true,
    commands: [enable, setSecret, doctor, { ...remove, outcome: 'warned-by-remove' }],
  },
  {
    name: 'the keychain index',
    path: (h) => join(h.store, '.yep-keychain.json'),
    follow: true,
    commands: [enable, setSecret, doctor, { ...remove, outcome: 'warned-by-remove' }],
  },
  {
    name: 'an approved grant',
    path: (h) => join(h.store, '.yep-grants', 'demo.json'),
    follow: true,
    // Read when a changed package is compared with what was approved.
    commands: [
      { args: (h) => ['install', join(h.root, 'src', 'demo'), '--yes'], outcome: 'refused', prepare: addTool },
      { ...update, prepare: addTool },
    ],
  },
  {
    name: 'an installed plugin.json',
    path: (h) => join(h.root, 'src', 'demo', 'plugin.json'),
    aliases: (h) => [join(h.store, 'demo', 'plugin.json')],
    follow: false,
    commands: [list, enable, setSecret, doctor, doctorDir('demo'), update],
  },
  {
    name: "a path package's plugin.json",
    path: (h) => join(h.root, 'src', 'other', 'plugin.json'),
    follow: false,
    commands: [installOther, doctorDir('other')],
  },
];

function checkRun(r: RunResult, h: Home, files: string[], e: Expectation, re: RegExp): void {
  const shown = `exit ${r.code} signal ${r.signal}\nstdout: ${r.stdout.slice(0, 800)}\nstderr: ${r.stderr.slice(0, 800)}`;
  expect(r.signal, `killed after ${TIMEOUT_MS} ms: the command hung\n${shown}`).toBeNull();
  const named = (text: string): boolean => files.some((f) => text.includes(f));
  switch (e.outcome) {
    case 'refused': {
      expect(r.code, shown).toBe(7);
      // --json runs print the error object on stdout.
      const report = e.args(h).includes('--json') ? String(jsonOf(r).error.message) : r.stderr;
      expect(named(report), `names the file\n${shown}`).toBe(true);
      expect(report, shown).toMatch(re);
      break;
    }
    case 'reported-by-list': {
      expect(r.code, shown).toBe(0);
      const problems: string[] = jsonOf(r).extensions.flatMap((x: { problems: string[] }) => x.problems);
      expect(named(problems.join('\n')), `names the file\n${shown}`).toBe(true);
      expect(problems.join('\n'), shown).toMatch(re);
      break;
    }
    case 'warned-by-remove':
      expect(r.code, shown).toBe(0);
      expect(named(r.stderr), `names the file\n${shown}`).toBe(true);
      expect(r.stderr, shown).toMatch(re);
      expect(existsSync(join(h.store, 'demo')), 'the package itself is removed').toBe(false);
      break;
  }
}

beforeAll(makeTemplate, 60_000);
afterAll(() => {
  for (const c of clones) c.cleanup();
  template?.cleanup();
});

/**
 * Every kind with each file's first command; a FIFO (the hang) and a dangling link
 * (the write-through) with every command. The reader is one helper, so this covers
 * each (file, kind) and each (file, command) without running the full product.
 */
function casesOf(fc: FileCase): { kind: Kind; e: Expectation; label: string }[] {
  const label = (kind: Kind, e: Expectation): string => `${kind}: ${e.args({ root: '<home>', configDir: '', store: '', env: {} }).join(' ')}`;
  return fc.commands.flatMap((e, i) => (i === 0 ? KINDS : (['fifo', 'dangling-link'] as Kind[])).map((kind) => ({ kind, e, label: label(kind, e) })));
}

describe.each(FILES)('$name as a special file', (fc) => {
  const cases = casesOf(fc);
  it.concurrent.each(cases)('$label', async ({ kind, e }) => {
    const h = cloneHome();
    e.prepare?.(h);
    const file = fc.path(h);
    makeSpecial(file, kind);
    const kindBefore = kindOf(lstatSync(file));
    const before = snapshot(h);
    const r = await runCli(e.args(h), { env: h.env, input: e.input ?? '', timeoutMs: TIMEOUT_MS });
    checkRun(r, h, [file, ...(fc.aliases?.(h) ?? [])], e, saysKind(kind, fc.follow));
    // The special file is still what it was; a refusal changed no state file.
    expect(kindOf(lstatSync(file))).toBe(kindBefore);
    if (e.outcome !== 'warned-by-remove') expect(snapshot(h)).toEqual(before);
  });
});

describe('an index cache entry as a special file', () => {
  let registry: TestRegistry;
  let t: TempHome;
  let env: Record<string, string>;
  const crate = 'yolop-extension-cachey';

  beforeAll(async () => {
    registry = await startRegistry();
    const manifest = { name: 'cachey', version: '1.0.0', yolop: { capabilityServer: { command: 'cachey-server' }, tools: [{ name: 'c' }] } };
    const data = buildCrate({
      name: crate,
      version: '1.0.0',
      files: { 'plugin.json': JSON.stringify(manifest), 'bin/cachey-server': { content: '#!/bin/sh\ncat\n', mode: 0o755 } },
    });
    registry.publish({ name: crate, vers: '1.0.0', data });
    t = makeTempHome('yep-special-cache-');
    env = { ...t.env, ...FAST_HTTP_ENV, YEP_EXT_INDEX: registry.indexUrl };
    const r = await runCli(['install', 'cachey'], { env, timeoutMs: TIMEOUT_MS });
    expect(r.code, r.stderr).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await registry?.close();
    t?.cleanup();
  });

  const cacheFiles = (): string[] => {
    const root = join(t.configDir, 'extensions', '.yep-cache', 'index');
    // The crate's own index entry: config.json's (cached beside it with its ETag)
    // is not read by `update`, so making it special would test nothing there.
    return readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.json'))
      .map((f) => join(root, f))
      .filter((f) => String((JSON.parse(readFileSync(f, 'utf8')) as { url?: unknown }).url).endsWith(`/${crate}`));
  };

  it.each(
    KINDS.flatMap((kind) =>
      [
        ['update', 'cachey'],
        ['install', 'cachey'],
      ].map((args) => ({ kind, args })),
    ),
  )('$kind: $args.0 $args.1', async ({ kind, args }) => {
    const [file] = cacheFiles();
    expect(file, 'the install wrote an index cache entry').toBeDefined();
    const saved = readFileSync(file!);
    makeSpecial(file!, kind);
    try {
      const r = await runCli(args, { env, timeoutMs: TIMEOUT_MS });
      const shown = `exit ${r.code} signal ${r.signal}\n${r.stderr.slice(0, 800)}`;
      expect(r.signal, `the command hung\n${shown}`).toBeNull();
      expect(r.code, shown).toBe(7);
      expect(r.stderr, shown).toContain(file);
      expect(r.stderr, shown).toMatch(saysKind(kind, false));
      expect(kindOf(lstatSync(file!))).toBe(kind === 'device-link' || kind === 'dangling-link' ? 'link' : kind);
    } finally {
      rmSync(file!, { recursive: true, force: true });
      writeFileSync(file!, saved);
    }
  });
});
