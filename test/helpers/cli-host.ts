/**
 * One child process that runs many yep-ext command lines, one after another: the bundle
 * bin/run.js loads (dist/bundle/cli.cjs, through bin/run.js's code-cache loader), loaded
 * once, and each command line run by its runCli with an io of its own (the env, directory
 * and stdin given, stdout and stderr captured, neither a terminal; the test seams its
 * YEP_EXT_TEST_* variables describe, as ./in-process.ts gives them).
 *
 * For runs that need what only a process's start gives (NODE_EXTRA_CA_CERTS, which Node
 * reads as it starts) but whose subject is not the start itself: the host is started with
 * that environment, and the commands share its start instead of paying one each. Where the
 * start is the subject (what a process loads, its exit by a signal, a terminal), use
 * home.ts's runCliProcess.
 */
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { BIN, documentedResult, REPO_ROOT, type RunOptions, type RunResult } from './home.js';
import { NODE_START_VARIABLES } from './in-process.js';

export interface CliHost {
  /** Run `yep-ext args…` in the host (options.env is the command's whole environment, as for runCli). */
  run(args: string[], options?: RunOptions): Promise<RunResult>;
  /** End the host (it exits once its input closes) and wait for it. */
  close(): Promise<void>;
}

/** The host: reads one JSON request a line on stdin, answers each with one JSON line on fd 3. */
const HOST_SCRIPT = `
const { requireWithCodeCache, REQUIRE_BUNDLED } = require(${JSON.stringify(BIN)});
const { seamsFromEnv } = require(${JSON.stringify(join(REPO_ROOT, 'test', 'helpers', 'seams.cjs'))});
globalThis[REQUIRE_BUNDLED] = (file) => requireWithCodeCache(file);
const bundle = requireWithCodeCache(${JSON.stringify(join(REPO_ROOT, 'dist', 'bundle', 'cli.cjs'))});
const out = (chunks) => ({ write: (t) => void chunks.push(t), isTTY: false, columns: 0, color: false });
const answer = (reply) => require('node:fs').writeSync(3, JSON.stringify(reply) + '\\n');
(async () => {
  for await (const line of require('node:readline').createInterface({ input: process.stdin })) {
    const { id, args, env, cwd, input } = JSON.parse(line);
    const stdout = [];
    const stderr = [];
    const hasSeams = Object.keys(env).some((k) => k.startsWith('YEP_EXT_TEST_'));
    const io = {
      env,
      cwd,
      stdin: { isTTY: false, async *[Symbol.asyncIterator]() { if (input) yield Buffer.from(input); } },
      stdout: out(stdout),
      stderr: out(stderr),
      onInterrupt: () => () => {},
      ...(hasSeams ? { testSeams: seamsFromEnv(env) } : {}),
    };
    try {
      const code = await bundle.runCli(args, io);
      answer({ id, code, stdout: stdout.join(''), stderr: stderr.join('') });
    } catch (e) {
      answer({ id, error: String(e && e.stack || e), stdout: stdout.join(''), stderr: stderr.join('') });
    }
  }
  // Input closed: done, whatever keep-alive connection the runs left open.
  process.exit(0);
})();`;

interface Reply {
  id: number;
  code?: number;
  error?: string;
  stdout: string;
  stderr: string;
}

/**
 * Start a host whose process environment is `processEnv` (PATH and the suite's TMPDIR added
 * unless given): what Node reads as it starts comes from here, each command's own
 * environment from its run.
 */
export function startCliHost(processEnv: Record<string, string>): CliHost {
  const child = spawn(process.execPath, ['-e', HOST_SCRIPT], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: tmpdir(), ...processEnv },
    stdio: ['pipe', 'inherit', 'inherit', 'pipe'],
  });
  const pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  let next = 0;
  let buffered = '';
  let ended: Error | undefined;
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const fail = (e: Error): void => {
    ended ??= e;
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  };
  child.once('error', fail);
  child.once('close', (code, signal) => fail(new Error(`the CLI host exited (${signal ?? code})`)));
  (child.stdio[3] as Readable).on('data', (d: Buffer) => {
    buffered += d.toString('utf8');
    let nl = buffered.indexOf('\n');
    while (nl >= 0) {
      const reply = JSON.parse(buffered.slice(0, nl)) as Reply;
      buffered = buffered.slice(nl + 1);
      pending.get(reply.id)?.resolve(reply);
      pending.delete(reply.id);
      nl = buffered.indexOf('\n');
    }
  });
  const stdin = child.stdin as Writable;
  return {
    async run(args, options = {}) {
      if (ended) throw ended;
      const id = ++next;
      const env = Object.fromEntries(Object.entries(options.env ?? {}).filter((e): e is [string, string] => e[1] !== undefined));
      // What Node reads as it starts is the host's: a run asking for other values would silently not get them.
      for (const name of NODE_START_VARIABLES) {
        if (env[name] !== undefined && env[name] !== processEnv[name]) {
          throw new Error(`yep-ext ${args.join(' ')}: ${name} differs from the CLI host's, which Node read as the host started; start a host with it`);
        }
      }
      const reply = await new Promise<Reply>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        stdin.write(`${JSON.stringify({ id, args, env, cwd: options.cwd ?? REPO_ROOT, input: options.input ?? '' })}\n`);
      });
      if (reply.error !== undefined) throw new Error(`yep-ext ${args.join(' ')} threw in the CLI host: ${reply.error}\nstderr:\n${reply.stderr}`);
      return documentedResult(args, reply.code!, reply.stdout, reply.stderr);
    },
    async close() {
      stdin.end();
      await exited;
    },
  };
}
