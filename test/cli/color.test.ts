/**
 * Colour as npm, cargo and gh users set it: on a terminal by default; never with
 * NO_COLOR or `--no-color` (a flag every command takes, as npm's); FORCE_COLOR
 * (anything but 0 or false) colours piped output too, as node, npm and chalk read it,
 * and as oclif's help already did. The process boundary is the subject (a pipe, a
 * terminal), so these run the built CLI as a process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempHome, runCli, runCliProcess, type TempHome } from '../helpers/home.js';
import { runCliInPty, SKIP_PTY } from '../helpers/pty.js';

let home: TempHome;
/** The home's environment without its NO_COLOR (every test home sets it), plus `extra`. */
const envWith = (extra: Record<string, string> = {}): Record<string, string> => {
  const { NO_COLOR: _, ...env } = home.env;
  return { ...env, ...extra };
};
const ESC = '\u001b[';

beforeAll(() => {
  home = makeTempHome();
});
afterAll(() => home.cleanup());

describe.skipIf(SKIP_PTY)('on a terminal', () => {
  it('errors are coloured; --no-color (before or after the name) and NO_COLOR make them plain', async () => {
    const coloured = await runCliInPty(['enable', 'nope'], { env: envWith(), cols: 80 });
    expect(coloured.code).toBe(3);
    expect(coloured.output).toContain(`${ESC}31merror`);
    for (const [args, env] of [
      [['enable', 'nope', '--no-color'], envWith()],
      [['enable', '--no-color', 'nope'], envWith()],
      [['enable', 'nope'], envWith({ NO_COLOR: '1' })],
      [['enable', 'nope', '--no-color'], envWith({ FORCE_COLOR: '1' })],
    ] as const) {
      const r = await runCliInPty([...args], { env, cols: 80 });
      expect(r.code, args.join(' ')).toBe(3);
      expect(r.output, args.join(' ')).toContain('error: The extension "nope" is not installed.');
      expect(r.output, args.join(' ')).not.toContain(ESC);
    }
  });
});

describe('piped', () => {
  it('plain by default; FORCE_COLOR=1 colours it, FORCE_COLOR=0 and NO_COLOR do not', async () => {
    const plain = await runCliProcess(['enable', 'nope'], { env: envWith() });
    expect(plain.code).toBe(3);
    expect(plain.stderr).not.toContain(ESC);
    const forced = await runCliProcess(['enable', 'nope'], { env: envWith({ FORCE_COLOR: '1' }) });
    expect(forced.code).toBe(3);
    expect(forced.stderr).toContain(`${ESC}31merror${ESC}39m: `);
    const cases: Array<Record<string, string>> = [{ FORCE_COLOR: '0' }, { FORCE_COLOR: 'false' }, { FORCE_COLOR: '1', NO_COLOR: '1' }];
    for (const extra of cases) {
      const r = await runCliProcess(['enable', 'nope'], { env: envWith(extra) });
      expect(r.stderr, JSON.stringify(extra)).not.toContain(ESC);
    }
  });

  it('every command takes --no-color: it is listed with --json in help and completes after Tab', async () => {
    const list = await runCli(['list', '--no-color', '--json'], { env: home.env });
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject({ extensions: [] });
    const help = await runCli(['doctor', '--help'], { env: home.env });
    expect(help.stdout).toMatch(/GLOBAL FLAGS\n[\s\S]*? {2,}--json +Format output as json\.\n {2,}--no-color +No colours/);
    const tab = await runCli(['__complete', 'remove', '--no-'], { env: home.env });
    expect(tab.stdout).toContain('--no-color');
  });
});
