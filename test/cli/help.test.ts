/**
 * Help as a new user meets it: the root help fits one screen (usage, every command
 * once, grouped, a few examples, and where the environment variables are described,
 * none listed), a command's examples are one per line, and text wraps at the width
 * of the terminal it is read on, in a real terminal (a PTY) and when stdout is piped
 * into a pager on it.
 */
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/command-table.js';
import { makeTempHome, runCli } from '../helpers/home.js';
import { SKIP_PTY, runCliInPty } from '../helpers/pty.js';

const home = makeTempHome('yep-help-');
const longest = (text: string): number => Math.max(...text.split('\n').map((l) => l.length));

describe('root help', () => {
  it('fits one screen: usage, every command once, examples, and docs/configuration.md for the environment', async () => {
    const r = await runCli(['--help'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(42);
    expect(longest(r.stdout)).toBeLessThanOrEqual(80);
    expect(r.stdout).toMatch(/^USAGE\n {2}\$ yep-ext <command>/m);
    expect(r.stdout).toMatch(/^EXAMPLES\n( {2}\$ yep-ext .+\n){3,4}/m);
    for (const id of Object.keys(COMMANDS)) expect(r.stdout.match(new RegExp(`^ {2}${id.replace(':', ' ')} {2,}\\S`, 'gm')), id).toHaveLength(1);
    expect(r.stdout).toContain('docs/configuration.md');
    expect(r.stdout).not.toMatch(/YEP_EXT_|YOLOP_/);
    // `yep-ext` alone and `yep-ext help` say the same.
    expect((await runCli([], { env: home.env })).stdout).toBe(r.stdout);
    expect((await runCli(['help'], { env: home.env })).stdout).toBe(r.stdout);
  });
});

describe("a command's help", () => {
  it('lists its examples one per line', async () => {
    const r = await runCli(['install', '--help'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    const examples = r.stdout
      .slice(r.stdout.indexOf('EXAMPLES\n') + 'EXAMPLES\n'.length)
      .split('\n\n')[0]!
      .split('\n');
    expect(examples.length).toBe((COMMANDS.install!.examples ?? []).length);
    for (const line of examples) expect(line).toMatch(/^ {2}\$ yep-ext install/);
  });
});

describe("a command's -h (clap's and cargo's short help)", () => {
  it('fits one screen at 80 columns for every command, lists every flag --help does, one line each, and points to --help', async () => {
    // The flag rows of the FLAGS sections (a description's wrapped line may start with a flag too).
    const flagLabels = (text: string): string[] => {
      let inFlags = false;
      const labels: string[] = [];
      for (const line of text.split('\n')) {
        if (/^[A-Z][A-Z ]*$/.test(line)) inFlags = /^(GLOBAL )?FLAGS$/.test(line);
        const m = inFlags ? /^ {2}(?:-\w, )?(?: {4})?(--[\w[\]-]+)/.exec(line) : null;
        if (m) labels.push(m[1]!);
      }
      return labels.sort();
    };
    // `help -h` is the root help (one screen, checked above).
    for (const id of Object.keys(COMMANDS).filter((c) => c !== 'help')) {
      const words = id.split(':');
      const short = await runCli([...words, '-h'], { env: { ...home.env, COLUMNS: '80' } });
      expect(short.code, id).toBe(0);
      const lines = short.stdout.trimEnd().split('\n');
      expect(lines.length, `${id}:\n${short.stdout}`).toBeLessThanOrEqual(42);
      // An example is never folded (it is to copy); every other line fits.
      const examples = short.stdout.slice(short.stdout.indexOf('EXAMPLES\n')).split('\n\n')[0]!.split('\n');
      expect(longest(lines.filter((l) => !examples.includes(l)).join('\n')), id).toBeLessThanOrEqual(80);
      const full = await runCli([...words, '--help'], { env: { ...home.env, COLUMNS: '80' } });
      expect(flagLabels(short.stdout), id).toEqual(flagLabels(full.stdout));
      expect(lines.at(-1), id).toBe(`Every flag in full and all examples: yep-ext ${words.join(' ')} --help`);
      // --help and `help <command>` are the whole page.
      expect((await runCli(['help', ...words], { env: { ...home.env, COLUMNS: '80' } })).stdout, id).toBe(full.stdout);
      expect(full.stdout, id).not.toContain('Every flag in full and all examples');
    }
  });
});

describe('wrapping', () => {
  it("every command's USAGE fits the width and breaks only between bracketed groups ([--index <url>] is never split)", async () => {
    for (const columns of [60, 80, 200]) {
      for (const id of Object.keys(COMMANDS)) {
        const r = await runCli([...id.split(':'), '--help'], { env: { ...home.env, COLUMNS: String(columns) } });
        const usage = /USAGE\n([\s\S]*?)\n\n/.exec(r.stdout)?.[1] ?? '';
        const [first = '', ...rest] = usage.split('\n');
        expect(first, `${id} at ${columns}`).toMatch(/^ {2}\$ yep-ext /);
        for (const line of [first, ...rest]) {
          expect(line.length, `${id} at ${columns}: ${line}`).toBeLessThanOrEqual(columns);
          // Each bracketed group opens and closes on the same line.
          expect((line.match(/\[/g) ?? []).length, `${id} at ${columns}: ${line}`).toBe((line.match(/\]/g) ?? []).length);
        }
        for (const line of rest) expect(line, `${id} at ${columns}`).toMatch(/^ {4}\[/);
      }
    }
  });

  it('COLUMNS sets the width when stdout is not a terminal', async () => {
    const wide = await runCli(['install', '--help'], { env: { ...home.env, COLUMNS: '150' } });
    expect(longest(wide.stdout)).toBeGreaterThan(120);
    expect(longest(wide.stdout)).toBeLessThanOrEqual(150);
    const text = (await runCli(['install', '--help'], { env: home.env })).stdout.split('\n').filter((l) => !l.startsWith('  $ '));
    expect(longest(text.join('\n'))).toBeLessThanOrEqual(80);
  });

  describe.skipIf(SKIP_PTY)('in a 200-column terminal', () => {
    it('wraps at 200 columns, not 80, on the terminal and piped into a pager on it', async () => {
      const tty = await runCliInPty(['install', '--help'], { env: home.env, cols: 200 });
      expect(tty.code).toBe(0);
      expect(longest(tty.output)).toBeGreaterThan(100);
      expect(longest(tty.output)).toBeLessThanOrEqual(200);
      // The root help's rows are short by design: none is wrapped or cut at 80 either.
      const root = await runCliInPty(['--help'], { env: home.env, cols: 200 });
      expect(root.code).toBe(0);
      expect(longest(root.output)).toBeLessThanOrEqual(200);
      // stdout piped (`yep-ext install --help | less`), stderr still the terminal: its width.
      const piped = await runCliInPty(['install', '--help'], { env: home.env, cols: 200, pipeTo: 'cat' });
      expect(piped.code).toBe(0);
      expect(longest(piped.output)).toBeGreaterThan(100);
      expect(longest(piped.output)).toBeLessThanOrEqual(200);
    });

    it('and at 60 columns no line of text is wider than the terminal (an example command is not broken)', async () => {
      const narrow = await runCliInPty(['install', '--help'], { env: home.env, cols: 60 });
      const text = narrow.output
        .replace(/\u001b\[[0-9;]*m/g, '')
        .split('\n')
        .filter((l) => !l.startsWith('  $ '));
      expect(longest(text.join('\n'))).toBeLessThanOrEqual(60);
    });
  });
});
