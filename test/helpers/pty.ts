/**
 * The built CLI in a real pseudo-terminal of a given size, through util-linux
 * `script`: stdout and stderr are the terminal (isTTY, columns), as for a person
 * at a shell. Tests that need it skip only when `script` is missing and
 * YEP_EXT_REQUIRE_ALL is not set (CI sets it: there a missing `script` fails).
 */
import { spawn, spawnSync } from 'node:child_process';
import { BIN, REPO_ROOT } from './home.js';
import { withSeams } from './seams.mjs';

export const HAS_SCRIPT = spawnSync('script', ['--version']).status === 0;
/** describe.skipIf(SKIP_PTY): skip without `script`, unless every test is required. */
export const SKIP_PTY = !HAS_SCRIPT && process.env.YEP_EXT_REQUIRE_ALL !== '1';

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Run `yep-ext args…` in a `cols`-column terminal. Output has the terminal's
 * \r\n turned back into \n. Asynchronous: a test's own servers (the loopback
 * registry) keep answering while it runs.
 */
export function runCliInPty(
  args: string[],
  options: { env: Record<string, string>; cols: number; rows?: number; cwd?: string; pipeTo?: string },
): Promise<{ code: number | null; output: string }> {
  if (!HAS_SCRIPT) return Promise.reject(new Error('util-linux `script` is needed for the terminal tests (apt-get install util-linux)'));
  const run = [process.execPath, BIN, ...args].map(quote).join(' ');
  // pipeTo: stdout into that command (a pager, `cat`), stderr still the terminal.
  const cmd = `stty cols ${options.cols} rows ${options.rows ?? 50} && ${options.pipeTo ? `${run} | ${options.pipeTo}` : `exec ${run}`}`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', cmd, '/dev/null'], {
      cwd: options.cwd ?? REPO_ROOT,
      env: withSeams({ TERM: 'xterm', ...options.env }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // Decoded once at the end: a chunk may end inside a UTF-8 sequence (│, …, 日本).
    const chunks: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => chunks.push(d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      child.stdin.destroy();
      resolve({ code, output: Buffer.concat(chunks).toString('utf8').replace(/\r\n/g, '\n') });
    });
  });
}

/**
 * What a terminal shows after `output` (runCliInPty's, \r\n already \n): lines
 * as left on screen once the live wait display (docs/feedback.md) has erased
 * itself. Models the few controls yep-ext writes: \r, \n, ESC[2K (erase line),
 * ESC[1A (up); other escape sequences (colours) are dropped. Tests of what
 * a table looks like read this instead of the raw byte stream.
 */
export function screenOf(output: string): string {
  const lines: string[][] = [[]];
  let row = 0;
  let col = 0;
  for (let i = 0; i < output.length; i++) {
    const c = output[i]!;
    if (c === '\u001b') {
      const m = /^\u001b\[([0-9;?]*)([A-Za-z])/.exec(output.slice(i, i + 16));
      if (m) {
        if (m[2] === 'K' && m[1] === '2') lines[row] = [];
        else if (m[2] === 'A') row = Math.max(0, row - Number(m[1] || 1));
        i += m[0].length - 1;
      }
      continue;
    }
    if (c === '\n') {
      row++;
      col = 0;
      lines[row] ??= [];
      continue;
    }
    if (c === '\r') {
      col = 0;
      continue;
    }
    const line = lines[row] ?? [];
    lines[row] = line;
    line[col++] = c;
  }
  // Erased rows at the bottom (a display cleared for good) are gone.
  while (lines.length > 1 && lines.at(-1)!.length === 0 && lines.at(-2)!.length === 0) lines.pop();
  return lines.map((l) => Array.from(l, (ch) => ch ?? ' ').join('')).join('\n');
}

/**
 * Drive `yep-ext args…` in a terminal: each step waits for its pattern in the output
 * (after the previous step's), then types its keys (`y\r`, `\r`). For prompts, which
 * appear only on a TTY. Output has \r\n turned back into \n.
 */
export async function driveCliInPty(
  args: string[],
  steps: [RegExp, string][],
  options: { env: Record<string, string>; cols?: number; cwd?: string; timeoutMs?: number },
): Promise<{ code: number | null; output: string }> {
  if (!HAS_SCRIPT) throw new Error('util-linux `script` is needed for the terminal tests (apt-get install util-linux)');
  const cmd = `stty cols ${options.cols ?? 120} rows 50 && exec ${[process.execPath, BIN, ...args].map(quote).join(' ')}`;
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], {
    cwd: options.cwd ?? REPO_ROOT,
    env: withSeams({ TERM: 'xterm', ...options.env }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  let waiter: { re: RegExp; from: number; resolve: () => void } | undefined;
  const check = () => {
    if (waiter?.re.test(output.slice(waiter.from))) {
      const w = waiter;
      waiter = undefined;
      w.resolve();
    }
  };
  child.stdout.on('data', (d: Buffer) => {
    output += d.toString();
    check();
  });
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  let from = 0;
  for (const [re, keys] of steps) {
    await Promise.race([
      new Promise<void>((resolve) => {
        waiter = { re, from, resolve };
        check();
      }),
      done,
    ]);
    from = output.length;
    child.stdin.write(keys);
  }
  const code = await done;
  clearTimeout(timer);
  child.stdin.end();
  return { code, output: output.replace(/\r\n/g, '\n') };
}
