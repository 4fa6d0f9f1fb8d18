/**
 * Context: the only door from core to the outside world (paths, environment,
 * logging, interactivity, registry location). Commands build one; library users
 * build one with createContext(); tests build one over a temp home.
 */
import { resolvePaths, type Paths } from './paths.js';
import { silentLogger, type Logger } from './log.js';
import { VERSION } from './version.js';
import type { CooldownOptions } from './policy/cooldown.js';

export const DEFAULT_INDEX_URL = 'https://index.crates.io/';

export interface Context {
  paths: Paths;
  env: Record<string, string | undefined>;
  log: Logger;
  /** True when we may prompt (stdin and stderr are TTYs and not --yes/CI). */
  interactive: boolean;
  /** Sparse index root, always ending in `/`, without the `sparse+` prefix. */
  indexUrl: string;
  /** User-Agent for every HTTP request (crates.io policy). */
  userAgent: string;
  /** Aborted on Ctrl-C; long work should stop promptly. */
  signal: AbortSignal;
  /** Release-age cooldown for resolution (--min-age, --allow-fresh, the policy's min_age); YEP_EXT_MIN_AGE is read from `env`. */
  cooldown?: CooldownOptions;
}

export interface ContextOptions {
  env?: Record<string, string | undefined>;
  log?: Logger;
  interactive?: boolean;
  indexUrl?: string;
  signal?: AbortSignal;
}

/** Normalise a sparse index root: strip `sparse+`, ensure the trailing slash. */
export function normalizeIndexUrl(url: string): string {
  const stripped = url.trim().replace(/^sparse\+/, '');
  return stripped.endsWith('/') ? stripped : `${stripped}/`;
}

export function createContext(options: ContextOptions = {}): Context {
  const env = options.env ?? process.env;
  return {
    paths: resolvePaths(env),
    env,
    log: options.log ?? silentLogger,
    interactive: options.interactive ?? false,
    indexUrl: normalizeIndexUrl(options.indexUrl ?? (env.YEP_EXT_INDEX || DEFAULT_INDEX_URL)),
    userAgent: `yep-ext/${VERSION} (+https://github.com/yolop/yep-ext)`,
    signal: options.signal ?? new AbortController().signal,
  };
}
