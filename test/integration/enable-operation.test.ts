import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { parse } from 'smol-toml';
import { makeTempHome, type TempHome } from '../helpers/home.js';
import { writeExtension } from '../helpers/extension-fixture.js';
import { runEnable, type FieldPrompter } from '../../src/core/operations/enable.js';
import { runDisable } from '../../src/core/operations/disable.js';
import { runSetSecret } from '../../src/core/operations/set-secret.js';
import { configStatus } from '../../src/core/settings/config-status.js';
import { loadInstalledManifest } from '../../src/core/store/installed-manifest.js';
import { Secret } from '../../src/core/settings/secret-value.js';
import type { YepError } from '../../src/core/errors.js';

const CANARY = 'CANARY-op-91c3';
let home: TempHome;
beforeEach(() => {
  home = makeTempHome();
  writeExtension(home.ctx().paths.storeDir, 'logfire');
});
afterEach(() => home.cleanup());

function scripted(answers: { secret?: string; select?: string; text?: string[] }) {
  const calls: string[] = [];
  const texts = [...(answers.text ?? [])];
  const prompter: FieldPrompter = {
    async secret(field, _ext, validate) {
      calls.push(`secret:${field.key}`);
      expect(validate('')).not.toBe(true);
      return new Secret(answers.secret ?? CANARY);
    },
    async select(field, _ext, choices) {
      calls.push(`select:${field.key}:${choices.join('|')}`);
      return answers.select ?? choices[0]!;
    },
    async text(field, _ext, validate) {
      calls.push(`text:${field.key}`);
      // What the CLI prompt does: keep asking until the validator accepts.
      for (;;) {
        const next = texts.shift();
        if (next === undefined) throw new Error('script ran out of answers');
        if (validate(next) === true) return next;
        calls.push(`rejected:${next}`);
      }
    },
  };
  return { prompter, calls };
}

const settings = () => parse(readFileSync(home.ctx().paths.settingsFile, 'utf8')) as any;

describe('setup on enable', () => {
  it('asks by field kind on a terminal: secret masked, enum as a selector, text typed and validated', async () => {
    const ctx = { ...home.ctx(), interactive: true };
    const { prompter, calls } = scripted({ select: 'slow', text: ['not a url', 'https://logfire.example'] });
    const r = await runEnable(ctx, 'yolop-extension-logfire', { prompter });
    expect(calls).toEqual(['secret:token', 'text:endpoint', 'rejected:not a url', 'select:mode:fast|slow']);
    expect(r).toMatchObject({
      name: 'logfire',
      enabled: true,
      changed: true,
      was_enabled: false,
      config_set: ['endpoint', 'mode'],
      secrets_set: [{ key: 'token', store: 'file' }],
    });
    expect(settings().capabilities).toEqual([{ ref: 'ext:logfire', endpoint: 'https://logfire.example', mode: 'slow' }]);
    expect(readFileSync(ctx.paths.secretsFile, 'utf8')).toContain(CANARY);
    expect(readFileSync(ctx.paths.settingsFile, 'utf8')).not.toContain(CANARY);
    expect(JSON.stringify(r)).not.toContain(CANARY);
    expect(JSON.stringify(ctx.log.lines)).not.toContain(CANARY);
  });

  it('asks only for required fields that are still unset', async () => {
    const ctx = { ...home.ctx(), interactive: true };
    const { prompter, calls } = scripted({});
    await runEnable(ctx, 'logfire', { prompter, config: ['endpoint=https://e.example', 'mode=fast'] });
    expect(calls).toEqual(['secret:token']);
    const again = scripted({});
    const r = await runEnable(ctx, 'logfire', { prompter: again.prompter });
    expect(again.calls).toEqual([]);
    expect(r).toMatchObject({ changed: false, was_enabled: true });
  });

  it('without a terminal: never prompts, enables, saves what was given, and reports setup_incomplete', async () => {
    const ctx = home.ctx();
    const { prompter, calls } = scripted({});
    let err: YepError | undefined;
    try {
      await runEnable(ctx, 'logfire', { prompter, config: ['mode=fast', 'port=8080', 'verbose=true', 'tags=a,b'] });
    } catch (e) {
      err = e as YepError;
    }
    expect(calls).toEqual([]);
    expect(err?.code).toBe('E_SETUP_INCOMPLETE');
    expect(err?.exitCode).toBe(10);
    expect(err?.details).toMatchObject({
      status: 'setup_incomplete',
      enabled: true,
      missing: [
        { key: 'token', secret: true, command: 'yep-ext set-secret logfire token' },
        { key: 'endpoint', secret: false, command: 'yep-ext enable logfire --config endpoint=<string>' },
      ],
    });
    expect(err?.hint).toContain('yep-ext set-secret logfire token');
    expect(settings().capabilities).toEqual([{ ref: 'ext:logfire', mode: 'fast', port: 8080, verbose: true, tags: ['a', 'b'] }]);
  });

  it('refuses schema violations, secrets and unknown keys in --config before writing anything', async () => {
    const ctx = home.ctx();
    await expect(runEnable(ctx, 'logfire', { config: ['port=70000'] })).rejects.toMatchObject({
      code: 'E_USAGE',
      message: expect.stringContaining('port must be <= 65535'),
    });
    await expect(runEnable(ctx, 'logfire', { config: ['mode=medium'] })).rejects.toMatchObject({ code: 'E_USAGE' });
    await expect(runEnable(ctx, 'logfire', { config: [`token=${CANARY}`] })).rejects.toSatisfy(
      (e: YepError) => e.code === 'E_USAGE' && !JSON.stringify(e.toJSON()).includes(CANARY),
    );
    await expect(runEnable(ctx, 'logfire', { config: ['nope=1'] })).rejects.toMatchObject({
      code: 'E_USAGE',
      hint: expect.stringContaining('endpoint, mode, port'),
    });
    expect(existsSync(ctx.paths.settingsFile)).toBe(false);
  });

  it('an extension that is not installed is an error with a hint', async () => {
    await expect(runEnable(home.ctx(), 'missing')).rejects.toMatchObject({ code: 'E_NOT_INSTALLED', hint: expect.stringContaining('yep-ext install missing') });
  });

  it('an extension without config enables cleanly', async () => {
    writeExtension(home.ctx().paths.storeDir, 'plain', null);
    const r = await runEnable(home.ctx(), 'plain');
    expect(r).toMatchObject({ enabled: true, changed: true, fields: [] });
  });
});

describe('disable', () => {
  it('keeps the config and is idempotent; enable flips it back', async () => {
    const ctx = home.ctx();
    mkdirSync(home.configDir, { recursive: true });
    const original = '# mine\n[[capabilities]]\nref = "ext:logfire"\nendpoint = "https://e.example"\nmode = "fast"\n';
    writeFileSync(ctx.paths.settingsFile, original);
    await runSetSecret(ctx, 'logfire', 'token', { readValue: async () => new Secret(CANARY) });
    expect(await runDisable(ctx, 'logfire')).toMatchObject({ enabled: false, changed: true });
    expect(await runDisable(ctx, 'logfire')).toMatchObject({ changed: false });
    expect(settings().capabilities[0]).toMatchObject({ enabled: false, endpoint: 'https://e.example', mode: 'fast' });
    await runEnable(ctx, 'logfire');
    expect(readFileSync(ctx.paths.settingsFile, 'utf8')).toBe(original);
  });

  it('works on a leftover table of an uninstalled extension, refuses an unknown name', async () => {
    const ctx = home.ctx();
    mkdirSync(home.configDir, { recursive: true });
    writeFileSync(ctx.paths.settingsFile, '[[capabilities]]\nref = "ext:gone"\n');
    expect(await runDisable(ctx, 'gone')).toMatchObject({ changed: true, installed: false });
    await expect(runDisable(ctx, 'never')).rejects.toMatchObject({ code: 'E_NOT_INSTALLED' });
  });
});

describe('configStatus (for list)', () => {
  it('reports set/unset and where from, never values', async () => {
    const ctx = home.ctx();
    await runEnable(ctx, 'logfire', { config: ['endpoint=https://e.example', 'mode=fast'] }).catch(() => {});
    await runSetSecret(ctx, 'logfire', 'token', { readValue: async () => new Secret(CANARY) });
    const status = await configStatus(ctx.paths, await loadInstalledManifest(ctx.paths, 'logfire'));
    expect(JSON.stringify(status)).not.toContain(CANARY);
    expect(JSON.stringify(status)).not.toContain('e.example');
    expect(Object.fromEntries(status.map((s) => [s.key, [s.set, s.source]]))).toEqual({
      token: [true, 'secrets'],
      endpoint: [true, 'settings'],
      mode: [true, 'settings'],
      port: [false, 'unset'],
      ratio: [false, 'unset'],
      verbose: [false, 'unset'],
      tags: [false, 'unset'],
      service_name: [false, 'default'],
    });
  });
});
