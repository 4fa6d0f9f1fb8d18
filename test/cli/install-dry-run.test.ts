/**
 * install --dry-run: the same fetch, verification and decision as an
 * install, printed as a plan (new / unchanged / repinned / replaced, the grant
 * diff, whether consent is needed) and nothing changed: every file of the config
 * directory byte-identical (the download cache aside), no staging, no lock taken.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixtureCrate } from '../helpers/crates.js';
import { configTree } from '../helpers/config-tree.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';
let reg: TestRegistry;
let home: TempHome;

function manifest(version: string, yolop: Record<string, unknown> = {}): string {
  return JSON.stringify({
    name: 'hello',
    version,
    yolop: { protocol_version: '1.0', capabilityServer: { command: 'hello-server' }, tools: [{ name: 'greet' }], ...yolop },
  });
}
const publish = (version: string, yolop: Record<string, unknown> = {}) =>
  reg.publish({ name: HELLO, vers: version, data: fixtureCrate(HELLO, version, { files: { 'plugin.json': manifest(version, yolop) } }) });
const env = () => ({ ...home.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0' });
const store = () => join(home.configDir, 'extensions');

/** Every path under the config directory (test/helpers/config-tree.ts). */
const state = () => configTree(home.configDir);

beforeEach(async () => {
  reg = await startRegistry();
  home = makeTempHome();
  publish('1.0.0');
});
afterEach(async () => {
  await reg.close();
  home.cleanup();
});

describe('install --dry-run', () => {
  it('in an empty home: plans a new install, prints it, and creates nothing but the download cache', async () => {
    const r = await runCli(['install', 'hello', '--dry-run'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`hello 1.0.0 from ${new URL(reg.indexUrl).host}:${HELLO}@1.0.0`); // the contribution summary, as install prints it
    expect(r.stdout).toContain('Would install hello 1.0.0');
    expect(r.stdout).toContain('(dry run)');
    expect(state()).toEqual([]);
    expect(existsSync(join(store(), '.yep-staging'))).toBe(false);

    const j = jsonOf(await runCli(['install', 'hello', '--dry-run', '--json'], { env: env() }));
    expect(j.plan).toHaveLength(1);
    expect(j.plan[0]).toMatchObject({
      spec: 'hello',
      name: 'hello',
      version: '1.0.0',
      action: 'new',
      consent_needed: false,
      source: { type: 'crate', crate_name: HELLO, version: '1.0.0' },
    });
    expect(j.plan[0].content_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(j.plan[0].grant).toMatch(/^sha256:[0-9a-f]{64}$/);

    // What the plan said is what the install then does.
    const real = jsonOf(await runCli(['install', 'hello', '--json'], { env: env() }));
    expect(real.installed[0]).toMatchObject({ status: 'installed', content_hash: j.plan[0].content_hash, grant: j.plan[0].grant, source: j.plan[0].source });
  });

  describe('over an installed extension', () => {
    let before: string[];
    beforeEach(async () => {
      const r = await runCli(['install', 'hello@^1'], { env: env() });
      expect(r.code, r.stderr).toBe(0);
      expect((await runCli(['enable', 'hello'], { env: env() })).code).toBe(0);
      before = state();
      expect(before.some((l) => l.startsWith('extensions/extensions.lock '))).toBe(true);
    });

    it('the same version is "unchanged"; state untouched', async () => {
      const j = jsonOf(await runCli(['install', 'hello@^1', '--dry-run', '--json'], { env: env() }));
      expect(j.plan[0]).toMatchObject({ action: 'unchanged', consent_needed: false, previous: { name: 'hello', version: '1.0.0' } });
      expect(state()).toEqual(before);
    });

    it('another version widening the grant is "replaced" with the diff and consent needed; exit 0 and state untouched', async () => {
      publish('2.0.0', { hooks: [{ event: 'pre_tool_use', tool_name_glob: '*' }] });
      const human = await runCli(['install', 'hello@2.0.0', '--dry-run'], { env: env() });
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toMatch(/\+ hook pre_tool_use on EVERY tool/);
      expect(human.stdout).toContain('Would replace hello: hello is installed at');
      expect(human.stdout).toContain('consent needed');
      const j = jsonOf(await runCli(['install', 'hello@2.0.0', '--dry-run', '--json'], { env: env() }));
      expect(j.plan[0]).toMatchObject({ action: 'replaced', consent_needed: true, version: '2.0.0', diff: { widens: true } });
      expect(j.plan[0].replace_reason).toContain(`this would replace it with ${new URL(reg.indexUrl).host}:yolop-extension-hello@2.0.0`);
      expect(state()).toEqual(before);

      // The real install asks for exactly that: refused without a TTY (the replace needs --yes).
      const refused = await runCli(['install', 'hello@2.0.0'], { env: env() });
      expect(refused.code).not.toBe(0);
      expect(state()).toEqual(before);
      const accepted = jsonOf(await runCli(['install', 'hello@2.0.0', '--yes', '--json'], { env: env() }));
      expect(accepted.installed[0]).toMatchObject({ status: 'replaced', grant: j.plan[0].grant, content_hash: j.plan[0].content_hash });
    });

    it('a local directory of the same name is "replaced" from another origin; no link is made', async () => {
      const dir = writePackage(join(home.root, 'pkgs', 'hello'), { name: 'hello' });
      const j = jsonOf(await runCli(['install', dir, '--dry-run', '--json'], { env: env() }));
      expect(j.plan[0]).toMatchObject({ action: 'replaced', source: { type: 'path', path: dir } });
      expect(j.plan[0].replace_reason).toContain(`is already installed from ${new URL(reg.indexUrl).host}:`);
      expect(state()).toEqual(before);
    });
  });

  it('a source that cannot be planned fails as the install would, and changes nothing', async () => {
    const before = state();
    const dry = await runCli(['install', 'no-such-ext', '--dry-run', '--json'], { env: env() });
    expect(state()).toEqual(before);
    const real = await runCli(['install', 'no-such-ext', '--json'], { env: env() });
    expect(dry.code).not.toBe(0);
    expect(dry.code).toBe(real.code);
    expect(jsonOf(dry).error.code).toBe(jsonOf(real).error.code);
  });

  it('several sources, one failing: the others are planned, exit E_PARTIAL, nothing changed', async () => {
    const before = state();
    const r = await runCli(['install', 'hello', 'no-such-ext', '--dry-run', '--json'], { env: env() });
    expect(r.code).not.toBe(0);
    const err = jsonOf(r).error;
    expect(err.code).toBe('E_PARTIAL');
    expect(state()).toEqual(before);
  });

  it('is not combined with --frozen', async () => {
    const r = await runCli(['install', '--frozen', '--dry-run'], { env: env() });
    expect(r.code).toBe(2);
  });
});
