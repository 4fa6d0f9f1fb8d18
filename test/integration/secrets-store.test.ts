import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeTempHome, type TempHome } from '../helpers/home.js';
import { secretFragments } from '../helpers/secret-fragments.js';
import { getSecrets, removeExtensionSecrets, secretStatus, setSecret, unsetSecret } from '../../src/core/settings/secrets.js';
import { keychainGet, KeychainUnavailable, keychainIndexFile } from '../../src/core/settings/keychain.js';
import { Secret } from '../../src/core/settings/secret-value.js';
import type { Paths } from '../../src/core/paths.js';

const FAKE = resolve(import.meta.dirname, '../fixtures/fake-keyring.mjs');
const CANARY = 'CANARY-k3y-0a9b';
const OTHER = '# yolop connectors\n[github]\ntoken = "ghp_keep"\n';

let home: TempHome;
let paths: Paths;
// The fake keyring reads its mode from this process's environment, which the worker's later files share: put back as found.
const priorMode = process.env.FAKE_KEYRING_MODE;
beforeEach(() => {
  home = makeTempHome();
  paths = home.ctx().paths;
  process.env.FAKE_KEYRING_MODE = 'ok';
});
afterEach(() => {
  home.cleanup();
  if (priorMode === undefined) delete process.env.FAKE_KEYRING_MODE;
  else process.env.FAKE_KEYRING_MODE = priorMode;
});

const mode = (f: string) => statSync(f).mode & 0o777;

describe('connections.toml on disk', () => {
  it('is created 0600 even under umask 000, and other tables stay byte for byte', async () => {
    const old = process.umask(0o000);
    try {
      await setSecret(paths, 'logfire', 'token', new Secret(CANARY));
    } finally {
      process.umask(old);
    }
    expect(mode(paths.secretsFile)).toBe(0o600);
    // Now with a host table before ours.
    writeFileSync(paths.secretsFile, `${OTHER}\n${readFileSync(paths.secretsFile, 'utf8')}`, { mode: 0o600 });
    await setSecret(paths, 'logfire', 'region', 'eu');
    const text = readFileSync(paths.secretsFile, 'utf8');
    expect(text.startsWith(OTHER)).toBe(true);
    expect(await getSecrets(paths, 'logfire')).toEqual({ token: CANARY, region: 'eu' });
    await removeExtensionSecrets(paths, 'logfire');
    expect(readFileSync(paths.secretsFile, 'utf8')).toBe(OTHER);
  });

  it('repairs a world-readable file to 0600 with a warning', async () => {
    mkdirSync(home.configDir, { recursive: true });
    writeFileSync(paths.secretsFile, OTHER);
    chmodSync(paths.secretsFile, 0o644);
    const r = await setSecret(paths, 'logfire', 'token', 't');
    expect(mode(paths.secretsFile)).toBe(0o600);
    expect(r.warnings.join('\n')).toMatch(/readable by other users \(mode 0644\); it is now 0600/);
    expect((await secretStatus(paths, 'logfire')).fileInfo).toMatchObject({ insecure: false, mode: 0o600 });
  });

  it('refuses to write through a symlink and leaves its target alone', async () => {
    mkdirSync(home.configDir, { recursive: true });
    const target = join(home.root, 'elsewhere.toml');
    writeFileSync(target, OTHER, { mode: 0o644 });
    symlinkSync(target, paths.secretsFile);
    await expect(setSecret(paths, 'logfire', 'token', 't')).rejects.toMatchObject({ code: 'E_STATE', message: expect.stringMatching(/symbolic link/) });
    expect(readFileSync(target, 'utf8')).toBe(OTHER);
    // Reading still follows it, as the host does.
    expect(await getSecrets(paths, 'github' as string)).toEqual({});
  });

  it('refuses to overwrite a corrupt file', async () => {
    mkdirSync(home.configDir, { recursive: true });
    writeFileSync(paths.secretsFile, Buffer.alloc(64), { mode: 0o600 });
    await expect(setSecret(paths, 'logfire', 'token', 't')).rejects.toMatchObject({ code: 'E_STATE' });
    expect(readFileSync(paths.secretsFile).equals(Buffer.alloc(64))).toBe(true);
  });

  it('refuses empty values; unset removes', async () => {
    await expect(setSecret(paths, 'logfire', 'token', '')).rejects.toMatchObject({ code: 'E_USAGE' });
    await setSecret(paths, 'logfire', 'token', 't');
    expect((await unsetSecret(paths, 'logfire', 'token')).changed).toBe(true);
    expect((await unsetSecret(paths, 'logfire', 'token')).changed).toBe(false);
    expect(readFileSync(paths.secretsFile, 'utf8')).toBe('');
  });
});

describe('keychain backend (fake module)', () => {
  const keychain = { load: () => import(FAKE), timeoutMs: 300 };

  it('stores in the keychain, keeps only names in the index, reads back for doctor', async () => {
    const r = await setSecret(paths, 'logfire', 'token', new Secret(CANARY), { store: 'keychain', keychain });
    expect(r).toMatchObject({ store: 'keychain', changed: true });
    expect(existsSync(paths.secretsFile)).toBe(false);
    const index = readFileSync(keychainIndexFile(paths), 'utf8');
    expect(index).not.toContain(CANARY);
    expect(JSON.parse(index)).toEqual({ version: 1, entries: { logfire: ['token'] } });
    expect(mode(keychainIndexFile(paths))).toBe(0o600);
    expect(await secretStatus(paths, 'logfire')).toMatchObject({ file: [], keychain: ['token'] });
    expect(await getSecrets(paths, 'logfire', { keychain })).toEqual({ token: CANARY });
  });

  it('moving a secret to the file removes the keychain copy (one copy only)', async () => {
    await setSecret(paths, 'logfire', 'token', 'k', { store: 'keychain', keychain });
    await setSecret(paths, 'logfire', 'token', 'f', { store: 'file', keychain });
    expect(await secretStatus(paths, 'logfire')).toMatchObject({ file: ['token'], keychain: [] });
    await expect(keychainGet('logfire', 'token', keychain)).resolves.toBeUndefined();
    await setSecret(paths, 'logfire', 'token', 'k2', { store: 'keychain', keychain });
    expect(await secretStatus(paths, 'logfire')).toMatchObject({ file: [], keychain: ['token'] });
    await removeExtensionSecrets(paths, 'logfire', { keychain });
    expect(await secretStatus(paths, 'logfire')).toMatchObject({ file: [], keychain: [] });
    await expect(keychainGet('logfire', 'token', keychain)).resolves.toBeUndefined();
  });

  it('AccessDenied falls back to the file with a one-line reason', async () => {
    process.env.FAKE_KEYRING_MODE = 'denied';
    const r = await setSecret(paths, 'logfire', 'token', 't', { store: 'keychain', keychain });
    expect(r.store).toBe('file');
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(
      /not reachable \(Couldn't access platform storage: AccessDenied\); storing logfire\.token in .*connections\.toml \(mode 0600\) instead/,
    );
    expect(r.warnings[0]).not.toMatch(/backtrace/i);
    expect(await getSecrets(paths, 'logfire')).toEqual({ token: 't' });
  });

  it('a keychain error quoting the value is redacted before its cut', async () => {
    process.env.FAKE_KEYRING_MODE = 'echo';
    const value = 'Kc7-qz41Wm93-Jx58-Rt27-vB90';
    const r = await setSecret(paths, 'logfire', 'token', new Secret(value), { store: 'keychain', keychain });
    expect(r.store).toBe('file');
    expect(r.warnings[0]).toMatch(/not reachable \(backend refused: k+/);
    expect(secretFragments(r.warnings.join('\n'), value)).toEqual([]);
  });

  it('a keychain that never answers is abandoned after the timeout', async () => {
    process.env.FAKE_KEYRING_MODE = 'hang';
    const started = Date.now();
    const r = await setSecret(paths, 'logfire', 'token', 't', { store: 'keychain', keychain });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(r.store).toBe('file');
    expect(r.warnings[0]).toMatch(/did not answer within 300 ms/);
  });

  it('a missing module is reported as an optional dependency', async () => {
    const r = await setSecret(paths, 'logfire', 'token', 't', { store: 'keychain', keychain: { load: () => import(join(home.root, 'nope.mjs')) } });
    expect(r.store).toBe('file');
    expect(r.warnings[0]).toMatch(/could not be loaded .*optional dependency/);
  });
});

describe('the real @napi-rs/keyring', () => {
  it('answers a read (or fails as KeychainUnavailable) within its timeout', async () => {
    const started = Date.now();
    try {
      await keychainGet('yep-ext-test-nonexistent', 'field', { timeoutMs: 3000 });
    } catch (e) {
      expect(e).toBeInstanceOf(KeychainUnavailable);
    }
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
