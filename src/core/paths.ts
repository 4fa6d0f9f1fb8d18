/**
 * The only module that knows where yolop keeps things (host-compat §1). Every
 * other module takes a Paths value, so tests point everything at a temp dir via
 * YOLOP_CONFIG_DIR / YOLOP_EXTENSIONS_DIR and never touch the real home.
 */
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { assertValidName } from './package/names.js';
import { ANY_NAME, type Custody } from './fs/custody.js';
import { isInside } from './fs/path-inside.js';

export interface Paths {
  /** The yolop config directory itself (…/yolop). */
  configDir: string;
  /** The extension store (<config>/extensions unless overridden). */
  storeDir: string;
  lockFile: string;
  settingsFile: string;
  secretsFile: string;
  /** Installer lock file; a dot-file so the host never takes it for a package. */
  installLockFile: string;
  /** Private staging area inside the store (same filesystem, so rename is atomic). */
  stagingDir: string;
  /** Scratch space owned by yep-ext inside the store (the index file cache). */
  cacheDir: string;
  /**
   * The download cache shared by every home of this user (docs/fleet.md):
   * verified `.crate`s and binaries, content-addressed. Outside the store on purpose.
   */
  sharedCacheDir: string;
  /**
   * Immutable package versions: `<store>/<name>` of a tree yep-ext owns is a
   * relative symlink to `.yep-packages/<name>.<id>` (store/package-versions.ts).
   */
  packagesDir: string;
  /** Approved grants, one `<name>.json` each (store/approved-grants.ts). */
  grantsDir: string;
  /** Stat signatures of installed trees, one `<name>.json` each (store/tree-state.ts). */
  stateDir: string;
  /** What doctor last saw each contributed MCP server offer, one `<name>.json` each (store/mcp-record.ts). */
  mcpDir: string;
}

type Env = Record<string, string | undefined>;

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v !== '' ? v : undefined;
}

/**
 * The home directory `env` names, as os.homedir() reads it from this process's own
 * environment (HOME, USERPROFILE on Windows), else the account's. From the run's
 * environment, not the process's: a library caller or an in-process test passes its own.
 */
export function homeDir(env: Env, platform: NodeJS.Platform = process.platform): string {
  return nonEmpty(platform === 'win32' ? env.USERPROFILE : env.HOME) ?? homedir();
}

/** The config root the host would use on this platform (§1). */
function defaultConfigDir(env: Env = process.env, platform: NodeJS.Platform = process.platform, home = homeDir(env, platform)): string {
  const override = nonEmpty(env.YOLOP_CONFIG_DIR);
  if (override) return resolve(override);
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'yolop');
  if (platform === 'win32') return join(nonEmpty(env.APPDATA) ?? join(home, 'AppData', 'Roaming'), 'yolop');
  const xdg = nonEmpty(env.XDG_CONFIG_HOME);
  // XDG says relative values are invalid and must be ignored.
  return join(xdg?.startsWith('/') ? xdg : join(home, '.config'), 'yolop');
}

/**
 * The shared download cache: YEP_EXT_CACHE_DIR, else the platform's cache
 * directory (`$XDG_CACHE_HOME/yep-ext` or `~/.cache/yep-ext`, macOS
 * `~/Library/Caches/yep-ext`, Windows `%LOCALAPPDATA%\yep-ext\Cache`).
 */
function defaultSharedCacheDir(env: Env = process.env, platform: NodeJS.Platform = process.platform, home = homeDir(env, platform)): string {
  const override = nonEmpty(env.YEP_EXT_CACHE_DIR);
  if (override) return resolve(override);
  if (platform === 'darwin') return join(home, 'Library', 'Caches', 'yep-ext');
  if (platform === 'win32') return join(nonEmpty(env.LOCALAPPDATA) ?? join(home, 'AppData', 'Local'), 'yep-ext', 'Cache');
  const xdg = nonEmpty(env.XDG_CACHE_HOME);
  return join(xdg?.startsWith('/') ? xdg : join(home, '.cache'), 'yep-ext');
}

export function resolvePaths(env: Env = process.env, platform: NodeJS.Platform = process.platform, homeArg?: string): Paths {
  const home = homeArg ?? homeDir(env, platform);
  const configDir = defaultConfigDir(env, platform, home);
  const storeOverride = nonEmpty(env.YOLOP_EXTENSIONS_DIR);
  const storeDir = storeOverride ? resolve(storeOverride) : join(configDir, 'extensions');
  return {
    configDir,
    storeDir,
    lockFile: join(storeDir, 'extensions.lock'),
    settingsFile: join(configDir, 'settings.toml'),
    secretsFile: join(configDir, 'connections.toml'),
    installLockFile: join(storeDir, '.yep-ext.lock'),
    stagingDir: join(storeDir, '.yep-staging'),
    cacheDir: join(storeDir, '.yep-cache'),
    sharedCacheDir: defaultSharedCacheDir(env, platform, home),
    packagesDir: join(storeDir, '.yep-packages'),
    grantsDir: join(storeDir, '.yep-grants'),
    stateDir: join(storeDir, '.yep-state'),
    mcpDir: join(storeDir, '.yep-mcp'),
  };
}

/** `<store>/<name>`, only ever built from a validated name. */
export function packageDir(paths: Paths, name: string): string {
  return join(paths.storeDir, assertValidName(name));
}

/**
 * The directory a person knows that holds `path`, for "the disk holding … is full": the
 * extension store (staging, the packages, the index cache live in it), the shared download
 * cache or the config directory; else `path`'s own directory.
 */
export function knownDirOf(paths: Paths, path: string): string {
  for (const dir of [paths.storeDir, paths.sharedCacheDir, paths.configDir]) {
    if (isInside(dir, path)) return dir;
  }
  return dirname(path);
}

const NAME = '[A-Za-z0-9_-]+';
/** A temp file of fs/temp-files.ts: `.<base>.yep-<pid>-<n>.tmp`. */
const TEMP = '\\..+\\.yep-\\d+-\\d+\\.tmp';

/** The store's own directories, each with the names yep-ext gives what it keeps there (fs/custody.ts). */
export type StoreArea = 'packages' | 'staging' | 'grants' | 'state' | 'cache' | 'mcp';

const AREAS: Record<StoreArea, { dir: (p: Paths) => string; names: RegExp; what: string }> = {
  // `<name>.<16 hex of the content hash>`, `.<n>` when taken (store/package-versions.ts).
  packages: { dir: (p) => p.packagesDir, names: new RegExp(`^${NAME}\\.(?:[0-9a-f]{16}|x)(?:\\.[1-9]\\d*)?$`), what: 'The package versions directory' },
  // `<pid>-<time>-<n>-<label>` (store/staging.ts), `.pending` for a removal to finish; git's neutral GIT_DIR.
  staging: {
    dir: (p) => p.stagingDir,
    names: /^(?:\d+-[0-9a-z]+-\d+-[A-Za-z0-9_-]*(?:\.pending)?|\.no-repository-\d+)$/,
    what: 'The staging directory',
  },
  // `<name>.json` (the approved grant), `<name>.lock.json` (the custody record, store/custody.ts).
  grants: {
    dir: (p) => p.grantsDir,
    names: new RegExp(`^(?:${NAME}\\.json|${NAME}\\.lock\\.json|${NAME}\\.json\\.\\d+|${TEMP})$`),
    what: 'The approved grants directory',
  },
  state: { dir: (p) => p.stateDir, names: new RegExp(`^(?:${NAME}\\.json|${TEMP})$`), what: 'The stat signatures directory' },
  cache: { dir: (p) => p.cacheDir, names: new RegExp(`^(?:index|agent-version\\.json|${TEMP})$`), what: 'The store cache directory' },
  mcp: { dir: (p) => p.mcpDir, names: new RegExp(`^(?:${NAME}\\.json|${TEMP})$`), what: 'The MCP tool records directory' },
};

const MOVED_HINT: Partial<Record<StoreArea, string>> = {
  packages: 'Then `yep-ext install --frozen` fetches again what the lock pins.',
};

/** The custody of one of the store's own directories (or of `sub` directories yep-ext makes below it, holding `names`). */
export function storeCustody(paths: Paths, area: StoreArea, sub: { owned: string[]; names: RegExp } = { owned: [], names: AREAS[area].names }): Custody {
  const a = AREAS[area];
  const dir = a.dir(paths);
  return {
    base: paths.storeDir,
    owned: [dir.slice(paths.storeDir.length + 1), ...sub.owned],
    names: sub.names,
    what: a.what,
    ...(MOVED_HINT[area] ? { hint: MOVED_HINT[area] } : {}),
  };
}

/** The custody of one stage (`.yep-staging/<stage>`): a real directory of yep-ext's, every entry in it its own. */
export function oneStageCustody(paths: Paths, stage: string): Custody {
  return storeCustody(paths, 'staging', { owned: [stage], names: ANY_NAME });
}

/** Every directory of the store that yep-ext deletes from or writes into. */
export const STORE_AREAS: readonly StoreArea[] = ['packages', 'staging', 'grants', 'state', 'cache', 'mcp'];

/**
 * The store's root and the config directory are the user's (and the host's): yep-ext
 * deletes there only files it names itself (its temp files, the keychain index).
 */
export function rootCustody(dir: string, names: RegExp, what: string): Custody {
  return { base: dir, owned: [], names, what };
}
