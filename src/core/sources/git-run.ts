/**
 * The one way yep-ext runs git: through simple-git, with an environment built from
 * scratch and fixed `-c` settings so that neither the fetched repository nor stray
 * variables can make git prompt, hang or run anything (hardening C20-C25):
 * - no prompts: GIT_TERMINAL_PROMPT=0, GIT_ASKPASS/SSH_ASKPASS empty, ssh BatchMode;
 * - a transport allow-list (GIT_ALLOW_PROTOCOL) chosen from the validated URL;
 * - no hooks (core.hooksPath=/dev/null), no fsmonitor, no submodule recursion, no
 *   LFS smudging, objects fsck'd on receipt, deterministic line endings;
 * - an overall deadline and an idle timeout, both killing the git process.
 *
 * simple-git blocks these settings by default because they are dangerous when a
 * caller passes user data into them; here every value is our own constant, and the
 * user's URL and ref reach git only after git-url.ts validated them, after `--`.
 */
import { simpleGit, type SimpleGit } from 'simple-git';
import type { Context, GitRemoteAdmission } from '../context.js';
import { useProxy } from '../net/proxy.js';
import { killTagged } from '../yep/process-tree.js';
import { gitUrlHost, type GitUrl } from './git-url.js';

/** Variables a user's git legitimately needs (proxies, CA bundles, ssh-agent, its own config). */
const PASSTHROUGH_ENV = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'TMPDIR',
  'XDG_CONFIG_HOME',
  'SSH_AUTH_SOCK',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'CURL_CA_BUNDLE',
  'SYSTEMROOT',
] as const;

export interface GitRunOptions {
  /** The repository git talks to: its http(s) proxy is checked before git runs. */
  remote: GitUrl;
  /** Transports git may use (GIT_ALLOW_PROTOCOL). */
  allowedProtocols: readonly string[];
  /** Working directory for git; must exist and be ours. */
  cwd: string;
  /** GIT_DIR. Always set, even to a path that does not exist, so git never discovers a repository around cwd. */
  gitDir: string;
  /** GIT_WORK_TREE, for checkout. */
  workTree?: string;
  /** Kills git when aborted (deadline, size cap, Ctrl-C). */
  signal: AbortSignal;
  /** Kill git after this long without output. */
  idleTimeoutMs: number;
  /** Loopback http only: refuse redirects so a test server cannot send git elsewhere. */
  noRedirects?: boolean;
}

/** The environment git runs with: a fixed allow-list plus our hardening variables. */
function buildGitEnv(ctx: Context, options: Pick<GitRunOptions, 'allowedProtocols' | 'gitDir' | 'workTree' | 'idleTimeoutMs'>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of PASSTHROUGH_ENV) {
    const value = ctx.env[key];
    if (value !== undefined && value !== '') env[key] = value;
  }
  if (!env.PATH) env.PATH = '/usr/local/bin:/usr/bin:/bin';
  const idleSeconds = Math.max(1, Math.ceil(options.idleTimeoutMs / 1000));
  Object.assign(env, {
    // English, stable messages: errors are classified by their text.
    LC_ALL: 'C',
    LANG: 'C',
    LANGUAGE: 'C',
    GIT_DIR: options.gitDir,
    GIT_TERMINAL_PROMPT: '0',
    // Empty (not unset): git then skips core.askPass and SSH_ASKPASS too.
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    SSH_ASKPASS_REQUIRE: 'never',
    GIT_SSH_COMMAND: `ssh -o BatchMode=yes -o ConnectTimeout=${Math.min(idleSeconds, 30)} -o ServerAliveInterval=15 -o ServerAliveCountMax=${Math.max(1, Math.ceil(idleSeconds / 15))}`,
    GIT_SSH_VARIANT: 'ssh',
    GIT_ALLOW_PROTOCOL: options.allowedProtocols.join(':'),
    GIT_LFS_SKIP_SMUDGE: '1',
    GIT_NO_REPLACE_OBJECTS: '1',
  });
  if (options.workTree !== undefined) env.GIT_WORK_TREE = options.workTree;
  return env;
}

/** The `-c` settings every git command gets. */
function gitConfigArgs(options: Pick<GitRunOptions, 'idleTimeoutMs'>): string[] {
  const idleSeconds = Math.max(1, Math.ceil(options.idleTimeoutMs / 1000));
  return [
    'core.hooksPath=/dev/null',
    'core.fsmonitor=false',
    'core.autocrlf=false',
    'core.eol=lf',
    'submodule.recurse=false',
    'fetch.recurseSubmodules=false',
    'filter.lfs.smudge=',
    'filter.lfs.process=',
    'filter.lfs.required=false',
    'transfer.fsckObjects=true',
    'gc.auto=0',
    'maintenance.auto=false',
    'advice.detachedHead=false',
    'init.defaultBranch=main',
    // curl gives up on a stalled transfer by itself, so an orphaned remote helper
    // does not outlive us for long when git is killed.
    'http.lowSpeedLimit=1',
    `http.lowSpeedTime=${idleSeconds}`,
  ];
}

/** `YEP_EXT_GIT_RUN=<random>`: set in one createGit's environment, so whatever git starts can be found again. */
function gitRunTag(): string {
  return `YEP_EXT_GIT_RUN=${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

/**
 * The `-c` settings that stop git following a redirect for `url`. git applies the
 * `http.<url>.*` setting whose URL matches best, whatever file it is in, so a user's
 * `[http "https://host/"] followRedirects = true` outranks a plain `http.followRedirects`
 * given here: the setting is given for the URL git uses too (its whole host and path: no
 * key matches better, and the command line is read last). Without its user and password:
 * git's command line is readable by every local user, and the URL a rewrite leads to may
 * carry a token. A URL with `=` or white space cannot be a `-c` key (git splits at the
 * first `=`); only the plain setting is given for it.
 */
function noRedirectArgs(url: string): string[] {
  const plain = ['-c', 'http.followRedirects=false'];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return plain;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return plain;
  parsed.username = '';
  parsed.password = '';
  const key = parsed.href;
  return /[=\s]/.test(key) ? plain : [...plain, '-c', `http.${key}.followRedirects=false`];
}

/**
 * A simple-git instance bound to one hardened environment, from ctx.git (default simple-git
 * itself). simple-git stops git (Ctrl-C, the deadline, the wait without progress) with a
 * SIGINT to git alone, which leaves its transport helper (`git-remote-http`, ssh) running,
 * blocked on the network: every git command that fails therefore also kills whatever still
 * carries this instance's tag in its environment (process-tree.ts, Linux).
 */
export function createGit(ctx: Context, options: GitRunOptions): SimpleGit {
  const tag = gitRunTag();
  const git = createPlainGit(ctx, options, tag);
  const raw = git.raw.bind(git) as (...args: unknown[]) => Promise<string>;
  // Before git runs anything for this remote: where the user's git config sends it is admitted too.
  let admitted: Promise<GitRemoteAdmission> | undefined;
  const swept = async (...args: unknown[]): Promise<string> => {
    admitted ??= ctx.admitGitRemote(ctx, options.remote, { kind: 'git', origin: { git_host: gitUrlHost(options.remote.url) } }, () =>
      raw(['ls-remote', '--get-url', '--', options.remote.url]),
    );
    // Where the policy restricts git hosts, a redirect to another host would fetch from a place nothing ruled.
    const admission = await admitted;
    const argv = (Array.isArray(args[0]) ? args[0] : args) as string[];
    // One refusal of redirects, the policy's and loopback http's alike (a user's URL-specific setting cannot reopen either).
    const follow = admission.followRedirects && options.noRedirects !== true;
    return raw(follow ? argv : [...noRedirectArgs(admission.followRedirects ? options.remote.url : admission.url), ...argv]).catch((e: unknown) => {
      killTagged(tag);
      if (admission.followRedirects) throw e;
      const status = /returned error: (30[12378])\b/.exec(String((e as Error)?.message ?? e))?.[1];
      throw status === undefined ? e : admission.redirected(status);
    });
  };
  return Object.assign(git, { raw: swept as SimpleGit['raw'] });
}

function createPlainGit(ctx: Context, options: GitRunOptions, tag: string): SimpleGit {
  // git's curl reads the same proxy variables (passed through above): a value neither
  // client can use is the one configuration error HTTP gives, before git runs.
  if (options.remote.transport === 'https' || options.remote.transport === 'http') useProxy(new URL(options.remote.url), ctx.env);
  return (ctx.git ?? simpleGit)({
    baseDir: options.cwd,
    binary: 'git',
    maxConcurrentProcesses: 1,
    trimmed: false,
    config: gitConfigArgs(options),
    abort: options.signal,
    timeout: { block: options.idleTimeoutMs },
    unsafe: {
      // Each of these is needed only for a constant set above; see the module comment.
      allowUnsafeHooksPath: true,
      allowUnsafeFsMonitor: true,
      allowUnsafeFilter: true,
      allowUnsafeSshCommand: true,
      allowUnsafeAskPass: true,
      allowUnsafeTemplateDir: true,
    },
    // simple-git treats "exit != 0 with empty stderr" as success; git does not.
    errors(error, result) {
      if (error) return error;
      if (result.exitCode !== 0) {
        return Buffer.concat([...result.stdErr, Buffer.from(`\n(git exited with status ${result.exitCode})`)]);
      }
      return undefined;
    },
  }).env({ ...buildGitEnv(ctx, options), [tag.slice(0, tag.indexOf('='))]: tag.slice(tag.indexOf('=') + 1) });
}
