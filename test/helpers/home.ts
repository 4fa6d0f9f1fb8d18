/** Temp homes and a CLI runner: every test gets its own YOLOP_CONFIG_DIR, never the real one. */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createContext, type Context } from '../../src/core/context.js';
import { memoryLogger } from '../../src/core/log.js';
import { seamsFromEnv, withSeams } from './seams.mjs';
import { removeTree } from './file-walk.js';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(REPO_ROOT, 'bin', 'run.js');

export interface TempHome {
  root: string;
  configDir: string;
  env: Record<string, string>;
  ctx(extra?: Record<string, string>): Context & { log: ReturnType<typeof memoryLogger> };
  cleanup(): void;
}

/** A temp home under the temp dir (scripts/test.mjs puts it on a memory file system where it can). */
export function makeTempHome(prefix = 'yep-home-'): TempHome {
  const base = tmpdir();
  const root = realpathSync(mkdtempSync(join(base, prefix)));
  const configDir = join(root, 'config', 'yolop');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: join(root, 'home'),
    YOLOP_CONFIG_DIR: configDir,
    NO_COLOR: '1',
    LANG: 'C.UTF-8',
    // The CLI's temp dir is the suite's (dry runs, scratch), as in an in-process run of this worker.
    TMPDIR: base,
    // The system policy file: absent unless a test writes it (never the real /etc/yolop).
    YEP_EXT_POLICY: join(root, 'system-policy.toml'),
  };
  return {
    root,
    configDir,
    env,
    ctx(extra = {}) {
      const log = memoryLogger();
      const all = { ...env, ...extra };
      // YEP_EXT_TEST_* variables become seams here, as the CLI gets them from the preload (./seams.mjs).
      const seams = seamsFromEnv(all);
      return Object.assign(createContext({ ...seams, env: all, log }), { log });
    },
    cleanup() {
      removeTree(root);
    },
  };
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * The exit statuses docs/exit-codes.md documents (the first column of its table). Every
 * runCli of the suite checks its status against them: a run that exits with another
 * number fails its test, whatever the test expected (test/cli/exit-codes.test.ts).
 */
export const DOCUMENTED_EXIT_STATUSES: ReadonlySet<number> = new Set(
  [...readFileSync(join(REPO_ROOT, 'docs', 'exit-codes.md'), 'utf8').matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1])),
);

/** A run's result, or an error naming a status docs/exit-codes.md does not document (every way of running the CLI checks it). */
export function documentedResult(args: readonly string[], code: number, stdout: string, stderr: string): RunResult {
  if (!DOCUMENTED_EXIT_STATUSES.has(code)) {
    throw new Error(`yep-ext ${args.join(' ')} exited ${code}, a status docs/exit-codes.md does not document\nstdout:\n${stdout}\nstderr:\n${stderr}`);
  }
  return { code, signal: null, stdout, stderr };
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  input?: string;
  /** A hang's limit: a child process is killed then (its result has the signal); an in-process run fails then. */
  timeoutMs?: number;
}

/**
 * Run a yep-ext command line in this process, through the one dispatcher (./in-process.ts:
 * the env, directory and stdin given, stdout and stderr captured, neither a terminal). What
 * most tests want: the command's behaviour on real homes, registries, git and servers,
 * without the CPU a Node start-up costs. Where the process itself is under test
 * (its exit by a signal, a kill, a TTY, what reaches its stdout and stderr as a process, its
 * start-up, the bundle bin/run.js loads, a lock held by another process), use runCliProcess.
 */
export async function runCli(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const { runInProcess } = await import('./in-process.js');
  return runInProcess(args, options);
}

/** Run the built CLI (bin/run.js) as a real child process (with the test preload when the env asks for seams: ./seams.mjs). */
export function runCliProcess(args: string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? REPO_ROOT,
      env: withSeams({ ...(options.env ?? {}) }) as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      try {
        resolvePromise(code === null ? { code, signal, stdout, stderr } : documentedResult(args, code, stdout, stderr));
      } catch (e) {
        reject(e);
      }
    });
    // A CLI that exits before reading its input (a usage error) closes the pipe: the write's
    // EPIPE is not the test's subject, and unheard it is an unhandled error of the whole run.
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

/** Parse stdout of a `--json` run. */
export function jsonOf<T = any>(r: RunResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON (exit ${r.code}):\n${r.stdout}\nstderr:\n${r.stderr}`);
  }
}
