/**
 * schema/plugin/v1.json, the JSON Schema of plugin.json for editors, and the check
 * generated from it (src/core/package/plugin-check.generated.ts): both are exactly
 * what `npm run schema` generates from the zod schemas (drift, as for schema/yep/v1),
 * the schema is valid JSON Schema 2020-12 that an editor's validator compiles, and it
 * accepts the example packages and every manifest `yep-ext new` writes, `$schema`
 * pointer included.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { PLUGIN_SCHEMA_URL } from '../../src/core/package/manifest-rules.js';
import { pluginJsonSchemaText } from '../../src/core/package/plugin-json-schema.js';
import { validateManifest } from '../../src/core/package/manifest-validate.js';
import { renderManifest } from '../../src/scaffold/manifest.js';
import { parseScaffoldRequest, type ScaffoldInput } from '../../src/scaffold/request.js';
import { REPO_ROOT } from '../helpers/home.js';

const committed = JSON.parse(readFileSync(join(REPO_ROOT, 'schema/plugin/v1.json'), 'utf8')) as Record<string, unknown>;

describe('schema/plugin/v1.json', () => {
  it('is what the zod schemas generate (run `npm run schema` after changing them)', () => {
    expect(readFileSync(join(REPO_ROOT, 'schema/plugin/v1.json'), 'utf8')).toBe(pluginJsonSchemaText());
  });

  it('and the generated check are current: `npm run schema -- --check` passes', () => {
    // Through the script CI runs, on the built dist/ (the generated check is ajv output, made there).
    const r = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/gen-schema.mjs'), '--check'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('schema/plugin/v1.json');
    expect(r.stdout).toContain('src/core/package/plugin-check.generated.ts');
  });

  it('is JSON Schema 2020-12 with an $id where editors fetch it, and compiles strictly', () => {
    expect(committed.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(committed.$id).toBe(PLUGIN_SCHEMA_URL);
    expect(() => new Ajv2020({ strict: true, strictTypes: false }).compile(committed)).not.toThrow();
  });

  const editor = new Ajv2020({ strict: false }).compile(committed);
  const examples = ['echo-node', 'echo-python'].map((e) => [e, JSON.parse(readFileSync(join(REPO_ROOT, 'examples', e, 'plugin.json'), 'utf8'))] as const);
  it.each(examples)('accepts examples/%s/plugin.json', (_name, manifest) => {
    expect(editor(manifest), JSON.stringify(editor.errors)).toBe(true);
  });

  it.each<[string, ScaffoldInput]>([
    ['one tool', { name: 'weather', tools: ['forecast'] }],
    [
      'everything',
      {
        name: 'full',
        tools: ['a', 'b'],
        hooks: ['pre_tool_use:bash'],
        commands: ['ship'],
        prompt: 'p',
        dynamicPrompt: true,
        status: true,
        skills: true,
        config: ['endpoint', 'token:secret:env=T'],
      },
    ],
  ])('accepts what `yep-ext new` writes (%s), $schema pointer first, and so does yep-ext', (_what, input) => {
    const manifest = renderManifest(parseScaffoldRequest(input));
    expect(Object.keys(manifest)[0]).toBe('$schema');
    expect(manifest.$schema).toBe(PLUGIN_SCHEMA_URL);
    expect(editor(manifest), JSON.stringify(editor.errors)).toBe(true);
    expect(validateManifest(manifest)).toHaveProperty('manifest');
  });

  it('tells editors what yep-ext refuses: an unknown hook key, a bad name, a wrong type', () => {
    const base = { name: 'x', yolop: { capabilityServer: { command: 'x' }, tools: [{ name: 't' }] } };
    expect(editor({ ...base, yolop: { ...base.yolop, hooks: [{ event: 'pre_tool_use', when: 1 }] } })).toBe(false);
    expect(editor({ ...base, name: '../x' })).toBe(false);
    expect(editor({ ...base, yolop: { ...base.yolop, prompt: 'yes' } })).toBe(false);
  });
});
