/**
 * The only module that knows where yolop keeps things (host-compat §1). Every
 * other module takes a Paths value, so tests point everything at a temp dir via
 * YOLOP_CONFIG_DIR / YOLOP_EXTENSIONS_DIR and never touch the real home.
 */
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { assertValidName } from './package/names.js';

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
}

type Env = Record<string, string | undefined>;

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v !== '' ? v : undefined;
}

/** The config root the host would use on this platform (§1). */
export function defaultConfigDir(env: Env = process.env, platform: NodeJS.Platform = process.platform, home = homedir()): string {
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
export function defaultSharedCacheDir(env: Env = process.env, platform: NodeJS.Platform = process.platform, home = nonEmpty(env.HOME) ?? homedir()): string {
  const override = nonEmpty(env.YEP_EXT_CACHE_DIR);
  if (override) return resolve(override);
  if (platform === 'darwin') return join(home, 'Library', 'Caches', 'yep-ext');
  if (platform === 'win32') return join(nonEmpty(env.LOCALAPPDATA) ?? join(home, 'AppData', 'Local'), 'yep-ext', 'Cache');
  const xdg = nonEmpty(env.XDG_CACHE_HOME);
  return join(xdg?.startsWith('/') ? xdg : join(home, '.cache'), 'yep-ext');
}

export function resolvePaths(env: Env = process.env, platform: NodeJS.Platform = process.platform, homeArg?: string): Paths {
  const home = homeArg ?? homedir();
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
    // The context's HOME (a library caller's or a test's env), not only this process's.
    sharedCacheDir: defaultSharedCacheDir(env, platform, homeArg ?? nonEmpty(env.HOME) ?? home),
    packagesDir: join(storeDir, '.yep-packages'),
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
    const rel = relative(dir, path);
    if (rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))) return dir;
  }
  return dirname(path);
}
