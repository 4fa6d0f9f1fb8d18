import { afterEach, beforeEach, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writeExtension } from '../helpers/extension-fixture.js';
import { describeNeeding, need } from '../helpers/needs.js';
import { HAS_SCRIPT, driveCliInPty } from '../helpers/pty.js';

// Real terminal sessions through util-linux `script` (a PTY): the prompts only
// appear when stdin is a TTY, and a masked prompt must never echo the value.
const CANARY = 'CANARYpty42';

let home: TempHome;
beforeEach(() => {
  home = makeTempHome();
  writeExtension(join(home.configDir, 'extensions'), 'logfire');
});
afterEach(() => home.cleanup());

/** Drive a CLI run in a terminal (helpers/pty.ts): each step waits for a pattern in the output, then types. */
function inPty(args: string[], steps: [RegExp, string][], cwd?: string): Promise<{ code: number | null; output: string }> {
  return driveCliInPty(args, steps, { env: home.env, ...(cwd ? { cwd } : {}) });
}

describeNeeding(need(HAS_SCRIPT, '`script` from util-linux (Debian package bsdutils)'), 'prompts on a terminal', () => {
  it('set-secret asks with hidden input and never echoes the value', async () => {
    const r = await inPty(['set-secret', 'logfire', 'token'], [[/logfire\.token \(hidden\)/, `${CANARY}\r`]]);
    expect(r.code, r.output).toBe(0);
    expect(r.output).not.toContain(CANARY);
    expect(r.output).toContain('*'.repeat(CANARY.length));
    const file = join(home.configDir, 'connections.toml');
    expect(readFileSync(file, 'utf8')).toContain(CANARY);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('new NAME alone asks for the language and the first tool, as npm init does', async () => {
    const r = await inPty(
      ['new', 'weather'],
      [
        [/Language of the server/, '\u001b[B\r'],
        [/Name of its first tool/, '\u0015forecast\r'],
      ],
      home.root,
    );
    expect(r.code, r.output).toBe(0);
    const manifest = JSON.parse(readFileSync(join(home.root, 'weather', 'plugin.json'), 'utf8'));
    expect(manifest.yolop.tools.map((t: { name: string }) => t.name)).toEqual(['forecast']);
    expect(readFileSync(join(home.root, 'weather', 'bin', 'weather'), 'utf8').split('\n')[0]).toBe('#!/usr/bin/env python3');
  });

  it('new alone asks for the name first (as npm init does); piped, it is the usage error naming NAME, and nothing is written', async () => {
    const r = await inPty(
      ['new'],
      [
        [/Name of the extension/, 'bad name\r'],
        [/Use letters, digits, _ and -/, '\u0015clock\r'],
        [/Language of the server/, '\r'],
        [/Name of its first tool/, '\r'],
      ],
      home.root,
    );
    expect(r.code, r.output).toBe(0);
    const manifest = JSON.parse(readFileSync(join(home.root, 'clock', 'plugin.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: 'clock', yolop: { tools: [{ name: 'clock' }] } });
    const piped = await runCli(['new'], { env: home.env, cwd: join(home.root, 'clock') });
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain('error: `yep-ext new` needs NAME: extension name');
    expect(readdirSync(join(home.root, 'clock')).sort()).toEqual(['.gitignore', 'README.md', 'bin', 'package.json', 'plugin.json', 'src', 'tsconfig.json']);
  });

  it('enable asks for each missing required field by kind', async () => {
    const r = await inPty(
      ['enable', 'logfire'],
      [
        [/logfire\.token - API token \(hidden\)/, `${CANARY}\r`],
        [/logfire\.endpoint - Where traces go \(string\)/, 'nope\r'],
        [/must match format "uri"/, '\u0015https://logfire.example\r'],
        [/logfire\.mode/, '\u001b[B\r'],
      ],
    );
    expect(r.code, r.output).toBe(0);
    expect(r.output).not.toContain(CANARY);
    expect(r.output).toContain('Enabled logfire.');
    const settings = parse(readFileSync(join(home.configDir, 'settings.toml'), 'utf8')) as any;
    expect(settings.capabilities).toEqual([{ ref: 'ext:logfire', endpoint: 'https://logfire.example', mode: 'slow' }]);
    expect(readFileSync(join(home.configDir, 'connections.toml'), 'utf8')).toBe(`["ext:logfire"]\ntoken = "${CANARY}"\n`);
  });

  it('--no-color: the prompts draw no SGR sequence, as the rest of the output; on a colour terminal without it they are coloured', async () => {
    const SGR = /\u001b\[[0-9;]*m/;
    const { NO_COLOR: _, ...colourEnv } = home.env;
    const steps: [RegExp, string][] = [
      [/logfire\.token - API token \(hidden\)/, `${CANARY}\r`],
      [/logfire\.endpoint - Where traces go \(string\)/, 'nope\r'],
      [/must match format "uri"/, '\u0015https://logfire.example\r'],
      [/logfire\.mode/, '\u001b[B\r'],
    ];
    const plain = await driveCliInPty(['enable', 'logfire', '--no-color'], steps, { env: colourEnv });
    expect(plain.code, plain.output).toBe(0);
    expect(plain.output).toContain('logfire.mode');
    expect(plain.output).not.toMatch(SGR);
    // The run it is compared with: the same terminal and environment, colour allowed.
    await runCli(['disable', 'logfire'], { env: home.env });
    await runCli(['set-secret', 'logfire', 'token', '--unset'], { env: home.env });
    const coloured = await driveCliInPty(['enable', 'logfire'], steps, { env: colourEnv });
    expect(coloured.code, coloured.output).toBe(0);
    expect(coloured.output).toMatch(SGR);
    // A yes/no question (confirm) and `new`'s questions (select, text) follow the same decision.
    const { b } = await installFirstTwin();
    const asked = await driveCliInPty(['install', b, '--no-color'], [[/Replace it\?/, 'n\r']], { env: colourEnv });
    expect(asked.code, asked.output).toBe(130);
    expect(asked.output).not.toMatch(SGR);
    const made = await driveCliInPty(
      ['new', 'clock', '--no-color'],
      [
        [/Language of the server/, '\r'],
        [/Name of its first tool/, '\r'],
      ],
      { env: colourEnv, cwd: home.root },
    );
    expect(made.code, made.output).toBe(0);
    expect(made.output).not.toMatch(SGR);
  });

  /** Two path packages with one name, the first installed: installing the second asks to replace it. */
  async function installFirstTwin(): Promise<{ a: string; b: string; lock: string }> {
    const src = join(home.root, 'src');
    const a = writeExtension(join(src, 'a'), 'twin', null);
    const b = writeExtension(join(src, 'b'), 'twin', null);
    const first = await runCli(['install', a], { env: home.env });
    expect(first.code, first.stderr).toBe(0);
    return { a, b, lock: join(home.configDir, 'extensions', 'extensions.lock') };
  }

  it('a prompt draws no escape sequence from what it quotes (a source path in a host-written lock)', async () => {
    // The replace question quotes where the installed package came from. yep-ext refuses such a
    // path itself, but the host's lock may hold one: an OSC sequence (a window title here; OSC 52
    // would write the clipboard).
    const { a, b, lock } = await installFirstTwin();
    writeFileSync(lock, readFileSync(lock, 'utf8').replace(`path = "${a}"`, `path = "${a}\\u001b]0;PWN\\u0007x"`));
    expect(readFileSync(lock, 'utf8')).toContain('\\u001b]0;PWN');
    const r = await inPty(['install', b], [[/Replace it\?/, 'n\r']]);
    expect(r.code, r.output).toBe(130);
    expect(r.output).toMatch(/already installed from/);
    expect(r.output).not.toContain('\u001b]0;PWN');
    expect(r.output).not.toContain('\u0007');
  });

  it('No at the replace prompt is "Cancelled", exit 130 as for Ctrl-C, and nothing changes', async () => {
    const { b, lock } = await installFirstTwin();
    const before = readFileSync(lock, 'utf8');
    const r = await inPty(['install', b], [[/Replace it\?/, 'n\r']]);
    expect(r.code, r.output).toBe(130);
    expect(r.output).toMatch(/Cancelled\./);
    expect(r.output).not.toMatch(/E_CONFLICT|already installed[^\n]*\n[^\n]*hint/i);
    expect(readFileSync(lock, 'utf8')).toBe(before);
  });
});
