/**
 * Stable `--json` shapes (issue 18, docs/json.md): every command's document has a
 * fixed set of keys, a missing value is `null` (never an absent key). Each command
 * runs in a real temp home against the built CLI; zod strict schemas check the keys
 * (a key that goes missing, or an unlisted one that appears, fails). Errors have one
 * shape for every command. Offline: the index is a closed loopback port.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { REPO_ROOT, makeTempHome, runCli, type TempHome } from '../helpers/home.js';

const ECHO = join(REPO_ROOT, 'examples', 'echo-node');
let home: TempHome;
const env = () => ({ ...home.env, YEP_EXT_INDEX: 'http://127.0.0.1:9/', YEP_EXT_HTTP_RETRIES: '0' });

const nullable = <T extends z.ZodType>(t: T) => t.nullable();
const source = z.looseObject({ type: z.string() });
const engines = z.strictObject({ status: z.string(), requires: nullable(z.string()), agent: nullable(z.string()), detail: z.string() });
const walkEngines = engines.extend({ skipped: z.array(z.unknown()), ignored: z.boolean() });
const field = z.strictObject({ key: z.string(), secret: z.boolean(), required: z.boolean(), set: z.boolean(), source: z.string(), env: nullable(z.string()).optional(), kept: z.boolean().optional(), default: z.unknown().optional() });
const hash = z.string().regex(/^sha256:[0-9a-f]{64}$/);

export const SCHEMAS = {
  error: z.strictObject({ error: z.strictObject({ code: z.string().regex(/^E_[A-Z_]+$/), message: z.string(), hint: z.string().optional(), details: z.record(z.string(), z.unknown()).optional() }) }),
  install: z.strictObject({
    installed: z.array(z.strictObject({ name: z.string(), version: nullable(z.string()), status: z.string(), source, content_hash: hash, grant: hash, contributions: z.looseObject({ name: z.string() }), command: z.strictObject({ found: z.boolean(), detail: z.string() }), notes: z.array(z.string()), engines: walkEngines })),
  }),
  plan: z.strictObject({
    plan: z.array(z.strictObject({ spec: z.string(), name: z.string(), version: nullable(z.string()), action: z.string(), source, content_hash: hash, grant: hash, previous: nullable(z.looseObject({ name: z.string() })), diff: nullable(z.looseObject({ widens: z.boolean() })), replace_reason: nullable(z.string()), consent_needed: z.boolean(), engines: walkEngines })),
  }),
  list: z.strictObject({
    extensions: z.array(z.strictObject({ name: z.string(), version: nullable(z.string()), description: nullable(z.string()), enabled: nullable(z.boolean()), source: nullable(source), content_hash: nullable(hash), grant: nullable(hash), dir: z.string(), problems: z.array(z.string()), config: nullable(z.array(field)), engines: nullable(engines) })),
  }),
  enable: z.strictObject({ name: z.string(), enabled: z.literal(true), changed: z.boolean(), was_enabled: z.boolean(), config_set: z.array(z.unknown()), secrets_set: z.array(z.unknown()), fields: z.array(field), engines }),
  disable: z.strictObject({ name: z.string(), enabled: z.literal(false), changed: z.boolean(), installed: z.boolean() }),
  verify: z.strictObject({ ok: z.boolean(), extensions: z.array(z.strictObject({ name: z.string(), ok: z.boolean(), dir: z.string(), content_hash: z.strictObject({ expected: hash, actual: nullable(hash), checked: z.string() }), binary: z.unknown(), command: z.strictObject({ ok: z.boolean(), detail: z.string() }), problems: z.array(z.unknown()), engines: nullable(engines), warnings: z.array(z.unknown()) })) }),
  outdated: z.strictObject({ outdated: z.array(z.strictObject({ name: z.string(), kind: z.string(), source: z.string(), current: nullable(z.string()), wanted: nullable(z.string()), latest: nullable(z.string()), requirement: nullable(z.string()), status: z.string(), engines: nullable(engines), newer_engines: z.unknown(), hint: nullable(z.string()), error: z.unknown() })), outdated_count: z.number() }),
  info: z.strictObject({ name: z.string(), installed: z.boolean(), version: nullable(z.string()), description: nullable(z.string()), enabled: nullable(z.boolean()), dir: nullable(z.string()), source: nullable(source), source_text: nullable(z.string()), pin: nullable(z.string()), content_hash: nullable(hash), grant: z.unknown(), approved_grant: nullable(hash), config: z.unknown(), verify: z.unknown(), engines: z.unknown(), upstream: z.unknown(), upstream_error: z.unknown(), registry: z.unknown() }),
  remove: z.strictObject({ name: z.string(), removed: z.strictObject({ store: z.boolean(), lock: z.boolean() }), previous: nullable(z.looseObject({ name: z.string() })) }),
};

async function json(args: string[], schema: keyof typeof SCHEMAS, code = 0): Promise<unknown> {
  const r = await runCli([...args, '--json'], { env: env(), cwd: home.root });
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(code);
  const doc = JSON.parse(r.stdout) as unknown;
  const parsed = SCHEMAS[schema].safeParse(doc);
  expect(parsed.success, `${args.join(' ')} --json does not match the "${schema}" shape: ${parsed.error?.message}\n${r.stdout}`).toBe(true);
  return doc;
}

beforeAll(() => {
  home = makeTempHome('yep-json-');
});
afterAll(() => home.cleanup());

describe('every command --json has its documented shape (docs/json.md)', () => {
  it('install, install --dry-run, list, info, enable, disable, verify, outdated, remove; errors', async () => {
    await json(['install', ECHO, '--dry-run'], 'plan');
    await json(['install', ECHO], 'install');
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
  });

  it('a key that goes missing fails the shape (the test can fail)', () => {
    const entry = { name: 'a', version: null, description: null, enabled: null, source: null, content_hash: null, grant: null, dir: '/x', problems: [], config: null, engines: null };
    expect(SCHEMAS.list.safeParse({ extensions: [entry] }).success).toBe(true);
    const { config: _dropped, ...missing } = entry;
    expect(SCHEMAS.list.safeParse({ extensions: [missing] }).success).toBe(false);
  });
});
