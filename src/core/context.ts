/**
 * Context: the only door from core to the outside world (paths, environment,
 * logging, interactivity, registry location, and the seams: HTTP, git, process
 * spawning, time, the OS keychain, crash-test pause points). Commands build one
 * (src/cli/cli-context.ts); library users build one with createContext(); tests
 * build one over a temp home and pass their own seams.
 *
 * createContext() fills production defaults without loading what they stand for:
 * the defaults for spawn, git and the keychain load their modules on first use,
 * so a `list` pays nothing for them (docs/performance.md).
 */
import type { SpawnOptions, ChildProcess } from 'node:child_process';
import type { SimpleGit, SimpleGitOptions } from 'simple-git';
import { resolvePaths, type Paths } from './paths.js';
import { silentLogger, type Logger } from './log.js';
import { VERSION } from './version.js';
import { systemClock, type Clock } from './clock.js';
import { httpSettings, type HttpSettings } from './net/http-settings.js';
import { systemSpawn } from './spawn.js';

export type { HttpSettings } from './net/http-settings.js';
import type { CooldownOptions } from './sources/crates-io/cooldown-options.js';
import type { GitUrl } from './sources/git-url.js';
import type { OriginFacts } from './sources/source.js';
import type { YepError } from './errors.js';

/** What the git runner may do for a remote the policy admitted; `redirected` is the refusal of a redirect git met. */
/**
 * Whether git may follow an HTTP redirect for a remote; when it may not, `url` is the URL git
 * really uses (after the user's insteadOf rewrites), which the refusal is keyed to.
 */
export type GitRemoteAdmission = { followRedirects: true } | { followRedirects: false; url: string; redirected: (status: string) => YepError };

export const DEFAULT_INDEX_URL = 'https://index.crates.io/';

/** How long yep-ext waits on other processes before it gives up. */
interface WaitLimits {
  /** For another yep-ext holding the installer lock (a dead holder's lock is taken over after 5 s anyway). */
  lockMs: number;
  /** For `yolop --version`, when yep-ext asks which agent is installed (engines checks). */
  agentVersionMs: number;
  /** Doctor's, for each step of stopping a server: its answer to shutdown, its exit once stdin closes, once sent SIGTERM. */
  doctorGraceMs: number;
}

const DEFAULT_WAITS: WaitLimits = { lockMs: 300_000, agentVersionMs: 3000, doctorGraceMs: 2000 };
export const DEFAULT_KEYCHAIN_TIMEOUT_MS = 5000;

/** Starts a process: node's `child_process.spawn` (always called with an options object). */
export type Spawn = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

/** Makes a simple-git instance from the hardened options src/core/sources/git-run.ts builds. */
export type GitFactory = (options: Partial<SimpleGitOptions>) => SimpleGit;

/** The shape of @napi-rs/keyring that yep-ext uses. */
export interface KeyringModule {
  AsyncEntry: new (
    service: string,
    account: string,
  ) => {
    setPassword(password: string): Promise<void>;
    getPassword(): Promise<string | undefined | null>;
    deletePassword(): Promise<unknown>;
  };
}

export interface KeychainBackend {
  /** Every keychain call gives up after this long (a hung D-Bus). */
  timeoutMs: number;
  /** Loads the backend; default: import('@napi-rs/keyring') (an optional dependency). */
  load?: () => Promise<unknown>;
}

export interface HttpSeam {
  /** Timeouts, throughput floor, retries, backoff (src/core/net/http-settings.ts). */
  limits: HttpSettings;
  /** Host names answered without DNS (lower-case name -> IP address), like curl --resolve. */
  resolve?: ReadonlyMap<string, string>;
  /**
   * undici's request function, for tests: when set, every request goes through undici
   * with it (src/core/net/send.ts); unset, a direct request uses node:http(s) and only
   * a proxied one loads undici.
   */
  request?: typeof import('undici').request;
}

/**
 * What this run's user said about running a package's own code on this machine
 * (docs/binaries.md "Consent to build"). Building a crate from source runs its
 * build scripts and compiler plugins: that needs this run's consent, which `--yes`
 * (said for other reasons in scripts) is not.
 */
interface PackageCodeConsent {
  /** 'force': --build (build even over a prebuilt); 'never': --no-build; 'auto': build only when no prebuilt fits. */
  build: 'auto' | 'never' | 'force';
  /** An explicit opt-in for this run (--allow-build, or --build). */
  allowBuild: boolean;
  /** Asks the person at the terminal; absent when nobody can be asked (no TTY, --yes, --json). */
  confirm?: (question: string) => Promise<boolean>;
}

export interface Context {
  paths: Paths;
  env: Record<string, string | undefined>;
  /** The directory a relative path the user typed is read against (`enable .`); default: the process's. */
  cwd?: string;
  log: Logger;
  /** True when we may prompt (stdin and stderr are TTYs and not --yes/CI). */
  interactive: boolean;
  /** Sparse index root, always ending in `/`, without the `sparse+` prefix. */
  indexUrl: string;
  /** User-Agent for every HTTP request (crates.io policy). */
  userAgent: string;
  /** Aborted on Ctrl-C; long work should stop promptly. */
  signal: AbortSignal;
  /** Time: deadlines, retry backoff, lock polling, stale-lock timing. */
  clock: Clock;
  /** The HTTP client's limits and transport (src/core/net/http.ts). */
  http: HttpSeam;
  /** The git runner (src/core/sources/git-run.ts); default: simple-git. */
  git?: GitFactory;
  /** Starts capability servers and cargo builds. */
  spawn: Spawn;
  /** The OS keychain backend (src/core/settings/keychain.ts). */
  keychain: KeychainBackend;
  /**
   * Named points inside state-changing work (`place:after-lock`, `download:mid`,
   * …: src/core/fs/checkpoint.ts). Unset in production; crash tests set it to
   * stop the process there and kill it.
   */
  checkpoint?: (point: string) => void | Promise<void>;
  /**
   * The root of a git mirror this run resolves and fetches git sources from
   * (--git-mirror, else YEP_EXT_GIT_MIRROR, read once when the context is made);
   * undefined = each repository's origin. Records keep the origin URL.
   */
  gitMirror?: string;
  /** Consent to run a package's own code (a cargo build); default: none given, nobody to ask. */
  packageCode: PackageCodeConsent;
  /**
   * Release-age cooldown for resolution (--min-age, --allow-fresh, the policy's min_age);
   * YEP_EXT_MIN_AGE is read from `env`. Set when the context is built (ContextOptions);
   * never assigned afterwards: an operation that adds the policy's floor derives a new context.
   */
  readonly cooldown?: CooldownOptions;
  /** How long to wait on other processes (the installer lock, the agent's `--version`). */
  waits: WaitLimits;
  /**
   * The policy's say on the URL git will really fetch from (policy/git-remote-gate.ts), for
   * the git runner, which sits below the policy code; throws E_POLICY to refuse. Says whether
   * git may follow an HTTP redirect (not where the policy restricts git hosts).
   */
  admitGitRemote: (
    ctx: Context,
    remote: GitUrl,
    spec: { kind: string; origin: OriginFacts },
    effectiveUrl: () => Promise<string>,
  ) => Promise<GitRemoteAdmission>;
}

export interface ContextOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  log?: Logger;
  interactive?: boolean;
  indexUrl?: string;
  signal?: AbortSignal;
  clock?: Clock;
  /** Limits set here win over the environment's. */
  http?: { limits?: Partial<HttpSettings>; resolve?: ReadonlyMap<string, string>; request?: HttpSeam['request'] };
  git?: GitFactory;
  spawn?: Spawn;
  keychain?: Partial<KeychainBackend>;
  checkpoint?: Context['checkpoint'];
  /** Wins over YEP_EXT_GIT_MIRROR; empty = none. */
  gitMirror?: string;
  packageCode?: PackageCodeConsent;
  /** The run's release-age cooldown flags (`Context.cooldown`). */
  cooldown?: CooldownOptions;
  waits?: Partial<WaitLimits>;
}

/** Normalise a sparse index root: strip `sparse+`, ensure the trailing slash. */
export function normalizeIndexUrl(url: string): string {
  const stripped = url.trim().replace(/^sparse\+/, '');
  return stripped.endsWith('/') ? stripped : `${stripped}/`;
}

/** YEP_EXT_KEYCHAIN_TIMEOUT_MS when it is a positive number. */
function keychainTimeout(env: Record<string, string | undefined>): number {
  const t = Number(env.YEP_EXT_KEYCHAIN_TIMEOUT_MS);
  return Number.isFinite(t) && t > 0 ? t : DEFAULT_KEYCHAIN_TIMEOUT_MS;
}

export function createContext(options: ContextOptions = {}): Context {
  const env = options.env ?? process.env;
  const http = options.http ?? {};
  const gitMirror = (options.gitMirror ?? env.YEP_EXT_GIT_MIRROR)?.trim();
  return {
    paths: resolvePaths(env),
    env,
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    log: options.log ?? silentLogger,
    interactive: options.interactive ?? false,
    indexUrl: normalizeIndexUrl(options.indexUrl ?? (env.YEP_EXT_INDEX || DEFAULT_INDEX_URL)),
    userAgent: `yep-ext/${VERSION} (+https://github.com/yolop/yep-ext)`,
    signal: options.signal ?? new AbortController().signal,
    clock: options.clock ?? systemClock,
    http: {
      limits: httpSettings(env, http.limits),
      ...(http.resolve ? { resolve: http.resolve } : {}),
      ...(http.request ? { request: http.request } : {}),
    },
    ...(options.git ? { git: options.git } : {}),
    spawn: options.spawn ?? systemSpawn,
    keychain: { timeoutMs: keychainTimeout(env), ...options.keychain },
    ...(options.checkpoint ? { checkpoint: options.checkpoint } : {}),
    ...(gitMirror ? { gitMirror } : {}),
    packageCode: options.packageCode ?? { build: 'auto', allowBuild: false },
    ...(options.cooldown ? { cooldown: options.cooldown } : {}),
    waits: { ...DEFAULT_WAITS, ...options.waits },
    admitGitRemote: async (ctx, remote, spec, effectiveUrl) =>
      (await import('./policy/git-remote-gate.js')).admitRewrittenRemote(ctx, remote, spec, effectiveUrl),
  };
}
