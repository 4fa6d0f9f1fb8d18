/**
 * The CLI run in this process, through the one dispatcher (src/cli/dispatch.ts's
 * runCli) with an io of its own: the environment and directory given, stdin the
 * input given (not a terminal), stdout and stderr captured (not terminals). The
 * same RunResult as home.ts's runCli, which spawns bin/run.js; use that one where
 * the process itself is under test (exit by signal, a kill, a TTY, start-up, what
 * the process loads).
 *
 * Test seams (YEP_EXT_TEST_* in env) are installed on the global the CLI reads them
 * from for the run and removed after it, so a run with seams must not overlap any
 * other in-process run (which would see them too): such an overlap throws, naming
 * runCliProcess, which gives each run a process of its own.
 */
import { DOCUMENTED_EXIT_STATUSES, REPO_ROOT, type RunOptions, type RunResult } from './home.js';
import { seamsFromEnv } from './seams.mjs';
import { runCli } from '../../src/cli/dispatch.js';
import type { CliIo, OutStream } from '../../src/cli/cli-io.js';
import { TEST_SEAMS_KEY } from '../../src/cli/test-seams.js';

function capture(): { stream: OutStream; text: () => string } {
  const chunks: string[] = [];
  return { stream: { write: (t) => void chunks.push(t), isTTY: false, columns: 0, color: false }, text: () => chunks.join('') };
}

/** In-process runs under way, and whether one of them installed seams. */
let running = 0;
let seamedRunning = false;

export async function runInProcess(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const env = { ...(options.env ?? {}) };
  const stdout = capture();
  const stderr = capture();
  const input = options.input ?? '';
  const io: CliIo = {
    env,
    cwd: options.cwd ?? REPO_ROOT,
    stdin: {
      isTTY: false,
      async *[Symbol.asyncIterator]() {
        if (input !== '') yield Buffer.from(input);
      },
    },
    stdout: stdout.stream,
    stderr: stderr.stream,
    onInterrupt: () => () => {},
  };
  const global = globalThis as Record<symbol, unknown>;
  const hasSeams = Object.keys(env).some((k) => k.startsWith('YEP_EXT_TEST_') && env[k] !== undefined);
  // A preload (NODE_OPTIONS) acts only in a new Node process: without one it would silently not run.
  if (env.NODE_OPTIONS) throw new Error(`yep-ext ${args.join(' ')}: NODE_OPTIONS asks for a process of its own; use runCliProcess`);
  if (seamedRunning || (hasSeams && running > 0)) {
    throw new Error(`yep-ext ${args.join(' ')}: in-process runs overlap and one has test seams, which every run in this process would see; use runCliProcess`);
  }
  const before = global[TEST_SEAMS_KEY];
  if (hasSeams) global[TEST_SEAMS_KEY] = seamsFromEnv(env);
  running++;
  seamedRunning = hasSeams;
  let code: number;
  let timer: NodeJS.Timeout | undefined;
  try {
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`yep-ext ${args.join(' ')} did not finish in ${options.timeoutMs} ms (in-process)`)),
        options.timeoutMs ?? 2 ** 31 - 1,
      );
    });
    code = await Promise.race([runCli(args, io), limit]);
  } finally {
    clearTimeout(timer);
    running--;
    if (hasSeams) {
      seamedRunning = false;
      global[TEST_SEAMS_KEY] = before;
    }
  }
  if (!DOCUMENTED_EXIT_STATUSES.has(code)) {
    throw new Error(
      `yep-ext ${args.join(' ')} exited ${code}, a status docs/exit-codes.md does not document\nstdout:\n${stdout.text()}\nstderr:\n${stderr.text()}`,
    );
  }
  return { code, signal: null, stdout: stdout.text(), stderr: stderr.text() };
}
