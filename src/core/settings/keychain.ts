/**
 * Optional OS keychain backend (@napi-rs/keyring, an optionalDependency): loaded
 * only when a secret is explicitly stored there or read back, every call under a
 * timeout, and any failure (module missing, no Secret Service, AccessDenied on
 * headless Linux, a hung D-Bus) reported as KeychainUnavailable so the caller can
 * fall back to connections.toml. The host never reads the keychain (see
 * docs/secrets.md); a small index of which fields live there lets `list` report
 * them without touching the keychain.
 */
import { removeOwned, makeDirs } from '../fs/custody.js';
import { readRegularTextSync } from '../fs/read-regular-file.js';
import { join } from 'node:path';
import { YepError, stateIoError } from '../errors.js';
import { writeFileAtomic } from '../fs/fs-atomic.js';
import { rootCustody, type Paths } from '../paths.js';
import { MIN_FRAGMENT, truncateRedacted } from '../text/redact.js';
import { DEFAULT_KEYCHAIN_TIMEOUT_MS, type Context, type KeychainBackend, type KeyringModule } from '../context.js';
import { systemClock, type Clock } from '../clock.js';
import { assertLockKept } from '../fs/lock-hold.js';

export const KEYCHAIN_SERVICE = 'yolop';

/**
 * Which backend and how long to wait: ctx.keychain (createContext fills the
 * timeout from YEP_EXT_KEYCHAIN_TIMEOUT_MS; tests pass their own `load`).
 */
export type KeychainOptions = Partial<KeychainBackend> & { clock?: Clock };

/** The keychain options of a Context: its backend and its clock. */
export const keychainOptions = (ctx: Pick<Context, 'keychain' | 'clock'>): KeychainOptions => ({ ...ctx.keychain, clock: ctx.clock });

/** The keychain could not be used; `reason` is one short line, never a secret. */
export class KeychainUnavailable extends Error {
  constructor(readonly reason: string) {
    super(`the OS keychain is not available: ${reason}`);
    this.name = 'KeychainUnavailable';
  }
}

type AsyncEntryLike = InstanceType<KeyringModule['AsyncEntry']>;

/** The keychain account for one field: `ext:<name>/<field>` (both are ^[A-Za-z0-9_-]+$). */
export const keychainAccount = (name: string, field: string): string => `ext:${name}/${field}`;

/** First line of a native error, without the Rust backtrace it carries; `secrets` (the value being stored) redacted before the cut. */
function shortReason(e: unknown, secrets: readonly string[] = []): string {
  const message = e instanceof Error ? e.message : String(e);
  return truncateRedacted(message.split('\n')[0] ?? '', 200, secrets, { marker: () => '…' }) || 'unknown error';
}

const loadKeyring = (): Promise<unknown> => import('@napi-rs/keyring');

async function loadModule(options: KeychainOptions): Promise<KeyringModule> {
  try {
    const mod = (await (options.load ?? loadKeyring)()) as Partial<KeyringModule> & { default?: Partial<KeyringModule> };
    const ctor = mod.AsyncEntry ?? mod.default?.AsyncEntry;
    if (typeof ctor !== 'function') throw new Error('the module has no AsyncEntry');
    return { AsyncEntry: ctor };
  } catch (e) {
    throw new KeychainUnavailable(`@napi-rs/keyring could not be loaded (${shortReason(e)}); it is an optional dependency`);
  }
}

async function withTimeout<T>(what: string, options: KeychainOptions, work: () => Promise<T>, secrets: readonly string[] = []): Promise<T> {
  const ms = options.timeoutMs ?? DEFAULT_KEYCHAIN_TIMEOUT_MS;
  let cancel: (() => void) | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // unref: a hung native call must not keep the CLI alive after we gave up on it.
    cancel = (options.clock ?? systemClock).timeout(() => reject(new KeychainUnavailable(`${what} did not answer within ${ms} ms`)), ms, { unref: true });
  });
  try {
    return await Promise.race([
      work().catch((e: unknown) => {
        throw e instanceof KeychainUnavailable ? e : new KeychainUnavailable(shortReason(e, secrets));
      }),
      timeout,
    ]);
  } finally {
    cancel?.();
  }
}

async function entry(name: string, field: string, options: KeychainOptions): Promise<AsyncEntryLike> {
  const mod = await loadModule(options);
  try {
    return new mod.AsyncEntry(KEYCHAIN_SERVICE, keychainAccount(name, field));
  } catch (e) {
    throw new KeychainUnavailable(shortReason(e));
  }
}

export async function keychainSet(name: string, field: string, value: string, options: KeychainOptions = {}): Promise<void> {
  await withTimeout(
    'the keychain',
    options,
    async () => {
      await (await entry(name, field, options)).setPassword(value);
      // A value shorter than a fragment cannot be told from ordinary text: redacting it would garble the reason.
    },
    value.length >= MIN_FRAGMENT ? [value] : [],
  );
}

/** The stored value, or undefined when there is none. */
export async function keychainGet(name: string, field: string, options: KeychainOptions = {}): Promise<string | undefined> {
  return withTimeout('the keychain', options, async () => (await (await entry(name, field, options)).getPassword()) ?? undefined);
}

export async function keychainDelete(name: string, field: string, options: KeychainOptions = {}): Promise<void> {
  await withTimeout('the keychain', options, async () => {
    try {
      await (await entry(name, field, options)).deletePassword();
    } catch (e) {
      // Deleting what is not there is success.
      if (!/no ?entry|not found/i.test(shortReason(e))) throw e;
    }
  });
}

/**
 * Which fields of which extension live in the keychain: names only, never values.
 * Kept in the store beside the installer lock (a dot-file, never a package).
 */
export type KeychainIndex = Record<string, string[]>;

export const keychainIndexFile = (paths: Paths): string => join(paths.storeDir, '.yep-keychain.json');

export async function readKeychainIndex(paths: Paths): Promise<KeychainIndex> {
  const file = keychainIndexFile(paths);
  const text = readRegularTextSync(file, 'The keychain index');
  if (text === undefined) return {};
  try {
    const value = JSON.parse(text) as { version?: unknown; entries?: unknown };
    const entries = value.entries;
    if (value.version !== 1 || typeof entries !== 'object' || entries === null || Array.isArray(entries)) throw new Error('unexpected shape');
    const out: KeychainIndex = {};
    for (const [k, v] of Object.entries(entries)) {
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new Error(`entry ${JSON.stringify(k)} is not a list of field names`);
      out[k] = v as string[];
    }
    return out;
  } catch (e) {
    throw new YepError('E_STATE', `The keychain index ${file} is unreadable: ${(e as Error).message}.`, {
      hint: `It only lists which secrets are in the OS keychain. Move it aside (mv "${file}" "${file}.bak") and set those secrets again.`,
    });
  }
}

export async function writeKeychainIndex(paths: Paths, index: KeychainIndex): Promise<void> {
  const entries: KeychainIndex = {};
  for (const k of Object.keys(index).sort()) {
    const fields = [...new Set(index[k])].sort();
    if (fields.length > 0) entries[k] = fields;
  }
  assertLockKept(paths);
  if (Object.keys(entries).length === 0) {
    // The index exists only while it names a field: empty, it is what it was before the first keychain secret.
    try {
      await removeOwned(rootCustody(paths.storeDir, /^\.yep-keychain\.json$/, 'The extension store'), '.yep-keychain.json', {
        keep: (st) => st.isDirectory(),
      });
    } catch (e) {
      throw stateIoError('remove', keychainIndexFile(paths), e);
    }
    return;
  }
  try {
    await makeDirs(paths.storeDir, 0o755);
  } catch (e) {
    throw stateIoError('create', paths.storeDir, e);
  }
  await writeFileAtomic(keychainIndexFile(paths), `${JSON.stringify({ version: 1, entries }, null, 2)}\n`, { mode: 0o600, what: 'The keychain index' });
}
