/**
 * The CLI run in this process, through the one dispatcher (src/cli/dispatch.ts's
 * runCli) with an io of its own: the environment and directory given, stdin the
 * input given (not a terminal), stdout and stderr captured (not terminals), and the
 * test seams its YEP_EXT_TEST_* variables describe (./seams.cjs) as the run's own
 * (`io.testSeams`), so runs may overlap, each with its own. home.ts's runCli runs
 * this; runCliProcess spawns bin/run.js where the process itself is under test (exit
 * by signal, a kill, a TTY, start-up, what the process loads).
 */
import { documentedResult, REPO_ROOT, type RunOptions, type RunResult } from './home.js';
import { seamsFromEnv } from './seams.mjs';
import { runCli } from '../../src/cli/dispatch.js';
import type { CliIo, OutStream } from '../../src/cli/cli-io.js';

/** Variables Node reads once, at start-up: a run in a process already started cannot honour them. */
export const NODE_START_VARIABLES = ['NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS'];

function capture(): { stream: OutStream; text: () => string } {
  const chunks: string[] = [];
  return { stream: { write: (t) => void chunks.push(t), isTTY: false, columns: 0, color: false }, text: () => chunks.join('') };
}

export async function runInProcess(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const env = { ...(options.env ?? {}) };
  // What Node reads only as it starts (a preload, the extra CA certificates) needs a new process:
  // in this one it would silently not apply.
  for (const name of NODE_START_VARIABLES) {
    if (env[name]) throw new Error(`yep-ext ${args.join(' ')}: ${name} asks for a process of its own; use runCliProcess`);
  }
  const stdout = capture();
  const stderr = capture();
  const input = options.input ?? '';
  const hasSeams = Object.keys(env).some((k) => k.startsWith('YEP_EXT_TEST_') && env[k] !== undefined);
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
    ...(hasSeams ? { testSeams: seamsFromEnv(env) } : {}),
  };
  let timer: NodeJS.Timeout | undefined;
  let code: number;
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
  }
  return documentedResult(args, code, stdout.text(), stderr.text());
}
