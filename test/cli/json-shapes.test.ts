/**
 * Stable `--json` shapes (docs/json.md): every command's document has a
 * fixed set of keys, a missing value is `null` (never an absent key). Each command
 * runs in a real temp home against the built CLI; zod strict schemas check the keys
 * (a key that goes missing, or an unlisted one that appears, fails). Errors have one
 * shape for every command. Offline: the index is a closed loopback port, or the
 * loopback registry (test/helpers/registry.ts) for crate updates, search and mirror.
 * doctor keeps the host's shape (host-compat.md §9): its extras `stderr_tail` and
 * `call` stay optional, as docs/doctor.md says.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fixtureCrate } from '../helpers/crates.js';
import { REPO_ROOT, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const ECHO = join(REPO_ROOT, 'examples', 'echo-node');
const HELLO = 'yolop-extension-hello';
let home: TempHome;
const env = () => ({ ...home.env, YEP_EXT_INDEX: 'http://127.0.0.1:9/', YEP_EXT_HTTP_RETRIES: '0' });

const nullable = <T extends z.ZodType>(t: T) => t.nullable();
const source = z.looseObject({ type: z.string() });
const engines = z.strictObject({ status: z.string(), requires: nullable(z.string()), agent: nullable(z.string()), detail: z.string() });
const walkEngines = engines.extend({ skipped: z.array(z.unknown()), ignored: z.boolean() });
const field = z.strictObject({
  key: z.string(),
  secret: z.boolean(),
  required: z.boolean(),
  set: z.boolean(),
  source: z.string(),
  env: nullable(z.string()),
  kept: z.boolean(),
});
const infoField = z.strictObject({
  key: z.string(),
  secret: z.boolean(),
  required: z.boolean(),
  set: z.boolean(),
  source: z.string(),
  env: nullable(z.string()),
  default: z.unknown(),
});
const hash = z.string().regex(/^sha256:[0-9a-f]{64}$/);
/** yep-ext's files of an extension that is no longer installed (list, verify, remove). */
const leftovers = z.strictObject({ paths: z.array(z.string()), bytes: z.number() });
const errorBody = z.strictObject({
  code: z.string().regex(/^E_[A-Z_]+$/),
  message: z.string(),
  hint: nullable(z.string()),
  details: nullable(z.record(z.string(), z.unknown())),
});
const frozenItem = z.strictObject({
  name: z.string(),
  status: z.enum(['skipped', 'installed', 'failed']),
  reason: nullable(z.string()),
  engines: nullable(engines),
});
const lockState = z.strictObject({ version: nullable(z.string()), content_hash: hash, source, grant: nullable(hash) });
const updateItem = z.strictObject({
  name: z.string(),
  status: z.enum(['up-to-date', 'updated', 'would-update', 'held', 'refused', 'failed']),
  from: lockState,
  to: nullable(lockState.extend({ grant: hash })),
  diff: nullable(z.looseObject({ widens: z.boolean(), changes: z.array(z.unknown()) })),
  first_approval: z.boolean(),
  contributions: nullable(z.looseObject({ name: z.string() })),
  consent_needed: z.boolean(),
  engines: nullable(walkEngines),
  binary: nullable(z.string()),
  newer_outside: nullable(z.strictObject({ version: z.string(), requirement: z.string(), spec: z.string() })),
  error: nullable(errorBody),
});
const violation = z.strictObject({ rule: z.string(), item: z.string(), message: z.string(), file: z.string() });
const configShow = {
  name: z.string(),
  enabled: z.boolean(),
  profile: nullable(z.string()),
  fields: z.array(field.extend({ value: z.unknown(), default: z.unknown(), kept_value: z.unknown() })),
  missing: z.array(z.string()),
};

const SCHEMAS = {
  error: z.strictObject({ error: errorBody }),
  install: z.strictObject({
    installed: z.array(
      z.strictObject({
        name: z.string(),
        version: nullable(z.string()),
        status: z.string(),
        source,
        content_hash: hash,
        grant: hash,
        contributions: z.looseObject({ name: z.string() }),
        command: z.strictObject({ found: z.boolean(), detail: z.string() }),
        notes: z.array(z.string()),
        engines: walkEngines,
        enabled: nullable(z.boolean()),
      }),
    ),
  }),
  frozen: z.strictObject({
    frozen: z.array(frozenItem),
    enabled: nullable(z.array(z.strictObject({ name: z.string(), ok: z.boolean(), error: nullable(errorBody) }))),
  }),
  plan: z.strictObject({
    plan: z.array(
      z.strictObject({
        spec: z.string(),
        name: z.string(),
        version: nullable(z.string()),
        action: z.string(),
        source,
        content_hash: hash,
        grant: hash,
        previous: nullable(z.looseObject({ name: z.string() })),
        diff: nullable(z.looseObject({ widens: z.boolean() })),
        replace_reason: nullable(z.string()),
        replace_asks: z.boolean(),
        consent_needed: z.boolean(),
        engines: walkEngines,
      }),
    ),
  }),
  list: z.strictObject({
    extensions: z.array(
      z.strictObject({
        name: z.string(),
        version: nullable(z.string()),
        description: nullable(z.string()),
        enabled: nullable(z.boolean()),
        source: nullable(source),
        content_hash: nullable(hash),
        grant: nullable(hash),
        dir: z.string(),
        problems: z.array(z.string()),
        config: nullable(z.array(field)),
        engines: nullable(engines),
        leftovers: nullable(leftovers),
      }),
    ),
  }),
  enable: z.strictObject({
    name: z.string(),
    enabled: z.literal(true),
    changed: z.boolean(),
    was_enabled: z.boolean(),
    profile: nullable(z.string()),
    config_set: z.array(z.unknown()),
    secrets_set: z.array(z.unknown()),
    fields: z.array(field),
    engines,
  }),
  disable: z.strictObject({ name: z.string(), enabled: z.literal(false), changed: z.boolean(), installed: z.boolean(), profile: nullable(z.string()) }),
  verify: z.strictObject({
    ok: z.boolean(),
    extensions: z.array(
      z.strictObject({
        name: z.string(),
        ok: z.boolean(),
        dir: z.string(),
        content_hash: z.strictObject({ expected: hash, actual: nullable(hash), checked: z.string() }),
        binary: z.unknown(),
        command: z.strictObject({ ok: z.boolean(), detail: z.string() }),
        problems: z.array(z.unknown()),
        engines: nullable(engines),
        warnings: z.array(z.unknown()),
      }),
    ),
    custody_restored: z.array(z.strictObject({ name: z.string(), keys: z.array(z.string()) })),
    leftovers: z.array(leftovers.extend({ name: z.string() })),
  }),
  outdated: z.strictObject({
    outdated: z.array(
      z.strictObject({
        name: z.string(),
        kind: z.string(),
        source: z.string(),
        current: nullable(z.string()),
        wanted: nullable(z.string()),
        latest: nullable(z.string()),
        requirement: nullable(z.string()),
        status: z.string(),
        engines: nullable(engines),
        newer_engines: z.unknown(),
        hint: nullable(z.string()),
        newer_outside: nullable(z.strictObject({ version: z.string(), requirement: z.string(), spec: z.string() })),
        tag: nullable(z.string()),
        error: z.unknown(),
      }),
    ),
    outdated_count: z.number(),
    unlocked: z.array(z.string()),
  }),
  info: z.strictObject({
    name: z.string(),
    installed: z.boolean(),
    version: nullable(z.string()),
    description: nullable(z.string()),
    enabled: nullable(z.boolean()),
    dir: nullable(z.string()),
    source: nullable(source),
    source_text: nullable(z.string()),
    pin: nullable(z.string()),
    content_hash: nullable(hash),
    grant: z.unknown(),
    approved_grant: nullable(hash),
    config: z.array(infoField),
    verify: z.unknown(),
    engines: z.unknown(),
    upstream: z.unknown(),
    upstream_error: z.unknown(),
    registry: z.unknown(),
  }),
  remove: z.strictObject({
    name: z.string(),
    removed: z.strictObject({ store: z.boolean(), lock: z.boolean(), settings: z.boolean(), secrets: z.boolean(), files: z.boolean() }),
    previous: nullable(z.looseObject({ name: z.string() })),
    leftovers: nullable(leftovers),
  }),
  update: z.strictObject({ updates: z.array(updateItem) }),
  search: z.strictObject({
    term: nullable(z.string()),
    api: z.string(),
    hits: z.array(
      z.strictObject({
        crate: z.string(),
        install: z.string(),
        version: nullable(z.string()),
        downloads: z.number(),
        description: nullable(z.string()),
        installed: nullable(z.strictObject({ name: z.string(), version: z.string() })),
      }),
    ),
    truncated: z.boolean(),
  }),
  // The host's shape (name, ok, checks) plus extras; stderr_tail and call are the host-style optional extras (docs/doctor.md).
  doctor: z.strictObject({
    name: z.string(),
    ok: z.boolean(),
    checks: z.array(z.strictObject({ name: z.string(), status: z.enum(['pass', 'warn', 'fail']), detail: z.string() })),
    package_dir: z.string(),
    source: z.enum(['installed', 'path']),
    problems: z.array(z.string()),
    server_pids: z.array(z.number()),
    duration_ms: z.number(),
    stderr_tail: z.string().optional(),
    call: z
      .strictObject({
        tool: z.string(),
        updates: z.array(z.string()),
        result: z.unknown().optional(),
        error: z.string().optional(),
        duration_ms: z.number().optional(),
      })
      .optional(),
    // Only when plugin.json declares MCP servers (docs/json.md).
    mcp_servers: z
      .array(
        z.strictObject({
          server: z.string(),
          host_name: z.string(),
          transport: z.enum(['stdio', 'http']),
          ok: z.boolean(),
          tools: z.array(z.strictObject({ name: z.string(), description: z.string(), input_schema: z.unknown() })),
          changes: z
            .strictObject({
              added: z.array(z.string()),
              removed: z.array(z.string()),
              described: z.array(z.strictObject({ name: z.string(), before: z.string(), after: z.string() })),
              schema: z.array(z.string()),
            })
            .nullable(),
          previous_run: z.string().nullable(),
        }),
      )
      .optional(),
  }),
  new: z.strictObject({
    name: z.string(),
    language: z.enum(['typescript', 'python', 'rust']),
    dir: z.string(),
    path: z.string(),
    files: z.array(z.strictObject({ path: z.string(), mode: z.string().regex(/^0[0-7]{3}$/) })),
    server: z.string(),
    handlers: z.array(z.string()),
    build: nullable(z.string()),
    buildNeeds: nullable(z.string()),
    next: z.array(z.string()),
    notes: z.array(z.string()),
    spec: z.strictObject({
      name: z.string(),
      language: z.string(),
      tools: z.array(z.string()),
      hooks: z.array(z.strictObject({ event: z.string(), glob: z.string() })),
      commands: z.array(z.string()),
      prompt: nullable(z.string()),
      dynamicPrompt: z.boolean(),
      status: z.boolean(),
      skills: z.boolean(),
      sampleTool: z.boolean(),
      config: z.array(z.strictObject({ key: z.string(), secret: z.boolean(), env: nullable(z.string()), envDerived: z.boolean() })),
    }),
  }),
  'set-secret': z.strictObject({
    name: z.string(),
    field: z.string(),
    file: z.string(),
    action: z.enum(['set', 'unset']),
    changed: z.boolean(),
    store: z.enum(['file', 'keychain']),
    host_visible: z.boolean(),
    env: nullable(z.string()),
    enabled: nullable(z.boolean()),
  }),
  mirror: z.strictObject({
    dir: z.string(),
    base_url: z.string(),
    index_url: z.string(),
    crates: z.array(
      z.strictObject({
        name: z.string(),
        crate: z.string(),
        version: z.string(),
        cksum: z.string(),
        origin: z.string(),
        index_file: z.string(),
        file: z.string(),
        added: z.boolean(),
      }),
    ),
    git: z.array(z.strictObject({ name: z.string(), url: z.string(), commit: z.string(), path: z.string(), added: z.boolean() })),
    git_mirror_url: z.string(),
    skipped: z.array(z.strictObject({ name: z.string(), reason: z.string() })),
    not_mirrored: z.array(z.strictObject({ name: z.string(), what: z.string(), reason: z.string() })),
    files: z.number(),
  }),
  'lock export': z.strictObject({ path: z.string(), entries: z.number(), local: z.array(z.string()) }),
  'config show': z.strictObject(configShow),
  'config set': z.strictObject({ ...configShow, changed: z.boolean(), config_set: z.array(z.string()) }),
  'policy init': z.strictObject({ path: z.string(), entries: z.number() }),
  'policy check': z.strictObject({ files: z.array(z.string()), checked: z.number(), violations: z.array(violation) }),
  'cache verify': z.strictObject({
    dir: z.string(),
    entries: z.number(),
    verified: z.number(),
    reclaimed: z.number(),
    bad: z.number(),
    missing: z.number(),
    bytes: z.number(),
    foreign: z.array(z.strictObject({ path: z.string(), is: z.string() })),
  }),
  'cache clean': z.strictObject({ dir: z.string(), removed: z.number(), foreign: z.array(z.strictObject({ path: z.string(), is: z.string() })) }),
};

async function json(args: string[], schema: keyof typeof SCHEMAS, code = 0, options: { env?: Record<string, string>; input?: string } = {}): Promise<any> {
  const r = await runCli([...args, '--json'], { env: options.env ?? env(), cwd: home.root, ...(options.input !== undefined ? { input: options.input } : {}) });
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(code);
  const doc = JSON.parse(r.stdout) as unknown;
  shaped(doc, schema, `${args.join(' ')} --json`, r.stdout);
  return doc;
}

/** `doc` matches SCHEMAS[schema] (update items inside error details are checked this way too). */
function shaped(doc: unknown, schema: keyof typeof SCHEMAS, what: string, text = JSON.stringify(doc)): void {
  const parsed = SCHEMAS[schema].safeParse(doc);
  expect(parsed.success, `${what} does not match the "${schema}" shape: ${parsed.error?.message}\n${text}`).toBe(true);
}

beforeAll(() => {
  home = makeTempHome('yep-json-');
});
afterAll(() => home.cleanup());

describe('every command --json has its documented shape (docs/json.md)', () => {
  it('install, install --dry-run, list, info, enable, disable, verify, outdated, remove; errors', async () => {
    await json(['install', ECHO, '--dry-run'], 'plan');
    await json(['install', ECHO], 'install');
    // install --frozen: every item has reason and engines, the document has enabled (null without --enable).
    const lockfile = join(home.root, 'echo.lock');
    await json(['lock', 'export', lockfile], 'lock export');
    expect(await json(['install', '--frozen'], 'frozen')).toEqual({
      frozen: [
        {
          name: 'echo-node',
          status: 'skipped',
          reason: 'already installed with the locked hash',
          engines: expect.objectContaining({ status: 'none', requires: null }),
        },
      ],
      enabled: null,
    });
    await json(['list'], 'list');
    await json(['info', 'echo-node'], 'info');
    await json(['enable', 'echo-node'], 'enable');
    await json(['disable', 'echo-node'], 'disable');
    await json(['verify'], 'verify');
    await json(['outdated'], 'outdated');
    // Already installed: the plan names what it would replace (`previous`), the rest still present.
    const again = (await json(['install', ECHO, '--dry-run'], 'plan')) as { plan: Array<{ action: string }> };
    expect(again.plan[0]!.action).toBe('unchanged');
    // The store entry gone: no manifest to read, so no config, description or engines; the keys stay, as null.
    rmSync(join(home.configDir, 'extensions', 'echo-node'));
    const list = (await json(['list'], 'list')) as { extensions: Array<Record<string, unknown>> };
    expect(list.extensions).toEqual([expect.objectContaining({ name: 'echo-node', config: null, description: null, engines: null })]);
    await json(['remove', 'echo-node'], 'remove');
    await json(['list'], 'list');
    // Errors: one shape whatever the command.
    await json(['remove', 'echo-node'], 'error', 3);
    await json(['frobnicate'], 'error', 2);
    await json(['install', 'hello'], 'error', 6);

    // install --frozen from the exported lock into the emptied store, with --enable; then a lock it cannot reproduce.
    expect(await json(['install', '--frozen', '--lockfile', lockfile, '--enable'], 'frozen')).toEqual({
      frozen: [{ name: 'echo-node', status: 'installed', reason: null, engines: expect.objectContaining({ status: 'none' }) }],
      enabled: [{ name: 'echo-node', ok: true, error: null }],
    });
    await json(['remove', 'echo-node'], 'remove');
    const wrong = join(home.root, 'wrong.lock');
    writeFileSync(wrong, readFileSync(lockfile, 'utf8').replace(/content_hash = "sha256:[0-9a-f]{64}"/, `content_hash = "sha256:${'0'.repeat(64)}"`));
    const integrity = await json(['install', '--frozen', '--lockfile', wrong], 'error', 5);
    expect(z.array(frozenItem).safeParse(integrity.error.details.failed).success, JSON.stringify(integrity)).toBe(true);
    expect(integrity.error.details.failed).toEqual([
      expect.objectContaining({ name: 'echo-node', status: 'failed', reason: expect.any(String), engines: null }),
    ]);
  });

  it('update (path: up to date, --dry-run, applied, refused, partly failed), with every key present', async () => {
    const alpha = writePackage(join(home.root, 'src', 'alpha'), { name: 'alpha', yolop: { tools: [{ name: 'a' }, { name: 'b' }] } });
    const beta = writePackage(join(home.root, 'src', 'beta'), { name: 'beta' });
    await json(['install', alpha, beta], 'install');
    const manifest = (dir: string) => JSON.parse(readFileSync(join(dir, 'plugin.json'), 'utf8'));
    const setManifest = (dir: string, yolop: Record<string, unknown>, version: string) => {
      const m = manifest(dir);
      writeFileSync(join(dir, 'plugin.json'), JSON.stringify({ ...m, version, yolop: { ...m.yolop, ...yolop } }));
    };

    const same = await json(['update', 'alpha'], 'update');
    expect(same.updates[0]).toMatchObject({
      status: 'up-to-date',
      from: { version: '0.1.0' },
      to: null,
      diff: null,
      engines: null,
      binary: null,
      newer_outside: null,
      error: null,
      first_approval: false,
      contributions: null,
    });

    // Narrowing (a tool removed): planned, then applied, the diff and `to` filled in.
    setManifest(alpha, { tools: [{ name: 'a' }] }, '0.2.0');
    const plan = await json(['update', 'alpha', '--dry-run'], 'update');
    expect(plan.updates[0]).toMatchObject({ status: 'would-update', to: { version: '0.2.0' }, consent_needed: false, error: null });
    const done = await json(['update', 'alpha'], 'update');
    expect(done.updates[0]).toMatchObject({ status: 'updated', from: { version: '0.1.0' }, to: { version: '0.2.0' }, diff: { widens: false } });
    expect(readFileSync(join(home.configDir, 'extensions', 'extensions.lock'), 'utf8')).toContain('version = "0.2.0"');

    // Widening without a TTY: the error's details.updates are items of the same shape.
    setManifest(alpha, { hooks: [{ event: 'pre_tool_use', tool_name_glob: 'bash' }] }, '0.3.0');
    const refused = await json(['update', 'alpha'], 'error', 8);
    expect(refused.error.details.updates).toHaveLength(1);
    shaped({ updates: refused.error.details.updates }, 'update', 'update (refused) details');
    expect(refused.error.details.updates[0]).toMatchObject({ status: 'refused', consent_needed: true, diff: { widens: true } });

    // One of two fails: E_PARTIAL; the failed item keeps its from.version and carries the error.
    writeFileSync(join(beta, 'plugin.json'), '{oops');
    const partial = await json(['update', 'alpha', 'beta', '--yes'], 'error', 11);
    shaped({ updates: partial.error.details.updates }, 'update', 'update (partial) details');
    expect(partial.error.details.updates).toEqual([
      expect.objectContaining({ name: 'alpha', status: 'updated' }),
      expect.objectContaining({
        name: 'beta',
        status: 'failed',
        from: expect.objectContaining({ version: '0.1.0' }),
        to: null,
        error: expect.objectContaining({ code: 'E_MANIFEST' }),
      }),
    ]);
    await json(['remove', 'alpha'], 'remove');
    await json(['remove', 'beta'], 'remove');
  }, 180_000); // a dozen CLI runs each: under the full suite's load on 2 cores they may pass the default 60 s

  it('new, set-secret (the value never in the JSON), doctor, lock export, policy init/check, mirror, cache verify/clean', async () => {
    mkdirSync(join(home.root, 'exts'));
    const created = await json(
      ['new', 'vault', '-l', 'py', '--tool', 'fetch', '--config', 'token:secret', '--config', 'region', '--dir', join(home.root, 'exts')],
      'new',
    );
    expect(created).toMatchObject({
      build: null,
      buildNeeds: null,
      spec: {
        prompt: null,
        config: [
          { key: 'token', env: 'VAULT_TOKEN', envDerived: true },
          { key: 'region', env: null, envDerived: false },
        ],
      },
    });
    const rust = await json(['new', 'guard', '-l', 'rust', '--prompt', 'Be careful.', '--config', 'level', '--dir', join(home.root, 'exts')], 'new');
    expect(rust).toMatchObject({ build: expect.any(String), spec: { prompt: 'Be careful.', config: [{ key: 'level', env: null, envDerived: false }] } });

    await json(['install', created.dir], 'install');
    const SECRET = 'tok-3b9f1c7e-canary';
    const r = await runCli(['set-secret', 'vault', 'token', '--stdin', '--json'], { env: env(), cwd: home.root, input: `${SECRET}\n` });
    expect(r.code, r.stderr).toBe(0);
    shaped(JSON.parse(r.stdout), 'set-secret', 'set-secret --json', r.stdout);
    expect(JSON.parse(r.stdout)).toMatchObject({ action: 'set', changed: true, store: 'file', env: 'VAULT_TOKEN' });
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(r.stdout + r.stderr).not.toContain(SECRET.slice(4, 16));
    // It is stored where yolop reads it.
    expect(readFileSync(join(home.configDir, 'connections.toml'), 'utf8')).toContain(SECRET);
    const shown = await json(['config', 'show', 'vault'], 'config show');
    expect(shown.fields).toEqual([
      expect.objectContaining({ key: 'token', secret: true, set: true, value: null }),
      expect.objectContaining({ key: 'region', secret: false, set: false, value: null }),
    ]);
    const set = await json(['config', 'set', 'vault', 'region=eu'], 'config set');
    expect(set).toMatchObject({ changed: true, config_set: ['region'], enabled: false });
    expect(set.fields[1]).toMatchObject({ key: 'region', kept: true, kept_value: 'eu' });
    expect(JSON.stringify(shown)).not.toContain(SECRET);
    await json(['config', 'set', 'vault', 'token=x'], 'error', 2);
    const unset = await json(['set-secret', 'vault', 'token', '--unset'], 'set-secret');
    expect(unset).toMatchObject({ action: 'unset', changed: true, env: null });
    expect(readFileSync(join(home.configDir, 'connections.toml'), 'utf8')).not.toContain(SECRET);

    const doctor = await json(['doctor', ECHO, '--call', 'echo', '--args', '{"text":"hi"}'], 'doctor');
    expect(doctor).toMatchObject({ name: 'echo-node', ok: true, source: 'path', call: { tool: 'echo' } });
    // The host's shape: stderr_tail only when a check failed (documented, kept).
    expect(doctor).not.toHaveProperty('stderr_tail');

    const exported = await json(['lock', 'export', join(home.root, 'exported.lock')], 'lock export');
    expect(exported.entries).toBe(1);
    expect(existsSync(join(home.root, 'exported.lock'))).toBe(true);
    expect(await json(['policy', 'check'], 'policy check')).toMatchObject({ files: [], checked: 1, violations: [] });
    const policy = await json(['policy', 'init', '--from-lock'], 'policy init');
    expect(readFileSync(policy.path, 'utf8')).toContain('vault');
    expect(await json(['policy', 'check'], 'policy check')).toMatchObject({ files: [policy.path], checked: 1, violations: [] });
    // A breach is the error shape; its details carry the same violations.
    writeFileSync(home.env.YEP_EXT_POLICY!, '[names]\ndeny = ["vau*"]\n');
    const breach = await json(['policy', 'check'], 'error', 13);
    expect(z.array(violation).safeParse(breach.error.details.violations).success, JSON.stringify(breach)).toBe(true);
    expect(breach.error.details.violations).toEqual([expect.objectContaining({ rule: 'names.deny', item: 'vault' })]);
    rmSync(home.env.YEP_EXT_POLICY!);
    rmSync(policy.path);

    const mirror = await json(['mirror', join(home.root, 'mirror')], 'mirror');
    expect(mirror.skipped).toEqual([expect.objectContaining({ name: 'vault' })]);
    await json(['cache', 'verify'], 'cache verify');
    await json(['cache', 'clean'], 'cache clean');
    await json(['remove', 'vault'], 'remove');
  }, 180_000);

  it('against the loopback registry: crate update (dry run, applied, up to date with a newer release outside), search, mirror, cache', async () => {
    const reg: TestRegistry = await startRegistry();
    try {
      const renv = { ...home.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0' };
      const publish = (v: string) =>
        reg.publish({ name: HELLO, vers: v, data: fixtureCrate(HELLO, v), description: 'Says hello', keywords: ['yolop-extension'], downloads: 3 });
      publish('1.0.0');
      await json(['install', 'hello@^1'], 'install', 0, { env: renv });
      publish('1.0.1');
      const plan = await json(['update', 'hello', '--dry-run'], 'update', 0, { env: renv });
      expect(plan.updates[0]).toMatchObject({
        status: 'would-update',
        from: { version: '1.0.0' },
        to: { version: '1.0.1' },
        engines: { status: expect.any(String) },
      });
      const done = await json(['update', 'hello'], 'update', 0, { env: renv });
      expect(done.updates[0]).toMatchObject({ status: 'updated', to: { version: '1.0.1' } });
      publish('2.0.0');
      const held = await json(['update', '--all'], 'update', 0, { env: renv });
      expect(held.updates[0]).toMatchObject({ status: 'up-to-date', to: null, newer_outside: { version: '2.0.0', requirement: '^1', spec: 'hello@^2' } });

      const found = await json(['search', 'hello'], 'search', 0, { env: renv });
      expect(found).toMatchObject({ term: 'hello', truncated: false, hits: [{ crate: HELLO, installed: { name: 'hello', version: '1.0.1' } }] });
      const all = await json(['search'], 'search', 0, { env: renv });
      expect(all.term).toBeNull();
      // Unreachable API: the error shape.
      await json(['search', 'x'], 'error', 6);

      const mirror = await json(['mirror', join(home.root, 'crate-mirror')], 'mirror', 0, { env: renv });
      expect(mirror.crates).toEqual([expect.objectContaining({ name: 'hello', version: '1.0.1', added: true })]);
      const verified = await json(['cache', 'verify'], 'cache verify', 0, { env: renv });
      expect(verified.entries).toBeGreaterThan(0);
      const cleaned = await json(['cache', 'clean'], 'cache clean', 0, { env: renv });
      expect(cleaned.removed).toBeGreaterThan(0);
      await json(['remove', 'hello'], 'remove', 0, { env: renv });
    } finally {
      await reg.close();
    }
  }, 180_000);

  it('a key that goes missing fails the shape (the test can fail)', () => {
    const entry = {
      name: 'a',
      version: null,
      description: null,
      enabled: null,
      source: null,
      content_hash: null,
      grant: null,
      dir: '/x',
      problems: [],
      config: null,
      engines: null,
      leftovers: null,
    };
    expect(SCHEMAS.list.safeParse({ extensions: [entry] }).success).toBe(true);
    const { config: _dropped, ...missing } = entry;
    expect(SCHEMAS.list.safeParse({ extensions: [missing] }).success).toBe(false);
    // The same for the keys this issue made always present (update, set-secret, new).
    const h = `sha256:${'a'.repeat(64)}`;
    const item = {
      name: 'a',
      status: 'up-to-date',
      from: { version: null, content_hash: h, source: { type: 'path' }, grant: null },
      to: null,
      diff: null,
      first_approval: false,
      contributions: null,
      consent_needed: false,
      engines: null,
      binary: null,
      newer_outside: null,
      error: null,
    };
    expect(SCHEMAS.update.safeParse({ updates: [item] }).success).toBe(true);
    for (const key of ['to', 'newer_outside', 'error'] as const) {
      const { [key]: _gone, ...rest } = item;
      expect(SCHEMAS.update.safeParse({ updates: [rest] }).success, key).toBe(false);
    }
    const secret = { name: 'a', field: 'token', file: '/c', action: 'unset', changed: false, store: 'file', host_visible: true, env: null, enabled: null };
    expect(SCHEMAS['set-secret'].safeParse(secret).success).toBe(true);
    const { env: _noEnv, ...noEnv } = secret;
    expect(SCHEMAS['set-secret'].safeParse(noEnv).success).toBe(false);
    // Errors, install --frozen items and config fields (the keys that were once left out).
    expect(SCHEMAS.error.safeParse({ error: { code: 'E_USAGE', message: 'm', hint: null, details: null } }).success).toBe(true);
    expect(SCHEMAS.error.safeParse({ error: { code: 'E_USAGE', message: 'm', hint: 'h' } }).success).toBe(false);
    expect(SCHEMAS.error.safeParse({ error: { code: 'E_USAGE', message: 'm', details: null } }).success).toBe(false);
    expect(SCHEMAS.frozen.safeParse({ frozen: [{ name: 'a', status: 'installed', reason: null, engines: null }], enabled: null }).success).toBe(true);
    expect(SCHEMAS.frozen.safeParse({ frozen: [{ name: 'a', status: 'installed' }], enabled: null }).success).toBe(false);
    expect(SCHEMAS.frozen.safeParse({ frozen: [] }).success).toBe(false);
    const f = { key: 'k', secret: false, required: false, set: false, source: 'unset', env: null, kept: false };
    expect(SCHEMAS.list.safeParse({ extensions: [{ ...entry, config: [f] }] }).success).toBe(true);
    const { env: _e, kept: _k, ...bare } = f;
    expect(SCHEMAS.list.safeParse({ extensions: [{ ...entry, config: [bare] }] }).success).toBe(false);
  });
});
