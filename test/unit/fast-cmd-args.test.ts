/**
 * The oclif-free runner's parser (src/cli/fast-cmd-args.ts) against oclif's own, in
 * process: for every command with a shared body (src/cli/command-bodies.ts), random
 * argument lists from a vocabulary of its flags, aliases and awkward words (`--`,
 * `-`, empty, help, clusters, `=` forms, unknown flags). Whatever our parser accepts,
 * oclif's Parser (with the command's real flag and arg objects, the json flag added as
 * Command.parse adds it) must accept too and return the same args, flags and argv;
 * whatever oclif refuses, ours must have declined. Also: each such command is plain
 * (static-shape.ts: the build would fail otherwise), and a definition with anything
 * the parser does not reproduce is refused with its reason.
 */
import { Args, Command, Flags, Parser } from '@oclif/core';
import { describe, expect, it } from 'vitest';
import { BODIES } from '../../src/cli/command-bodies.js';
import { parseCommandArgs } from '../../src/cli/fast-cmd-args.js';
import { fastCmdShape } from '../../src/cli/fast-cmd.js';
import { staticShape, type FastCommandDef } from '../../src/cli/static-shape.js';
import Enable from '../../src/commands/enable.js';
import Disable from '../../src/commands/disable.js';
import Remove from '../../src/commands/remove.js';
import SetSecret from '../../src/commands/set-secret.js';
import Verify from '../../src/commands/verify.js';

const CLASSES: Record<string, typeof Command> = { enable: Enable, disable: Disable, remove: Remove, 'set-secret': SetSecret, verify: Verify };
const ALL_IDS = [
  'cache:clean',
  'cache:verify',
  'lock:export',
  'policy:check',
  'policy:init',
  ...Object.keys(CLASSES),
  'list',
  'install',
  'update',
  'doctor',
  'info',
];

function defOf(id: string): FastCommandDef {
  const d = staticShape(id, CLASSES[id]!, ALL_IDS);
  if ('reason' in d) throw new Error(`${id}: ${d.reason}`);
  return d;
}

/** oclif's parse of `argv` for `ctor` as Command.parse calls it (json flag first, as aggregateFlags adds it), or the error. */
async function oclifParse(ctor: typeof Command, argv: string[]): Promise<{ args: unknown; flags: unknown; argv: unknown } | { error: string }> {
  const c = ctor as unknown as { args?: object; flags?: object; baseFlags?: object; strict?: boolean; enableJsonFlag?: boolean };
  const flags = {
    ...(c.enableJsonFlag ? { json: Flags.boolean({ description: 'Format output as json.', helpGroup: 'GLOBAL' }) } : {}),
    ...c.baseFlags,
    ...c.flags,
  };
  try {
    const r = await Parser.parse(argv, { args: c.args ?? {}, flags, strict: c.strict !== false, context: undefined } as never);
    return { args: r.args, flags: r.flags, argv: r.argv };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** A small seeded PRNG (mulberry32): the same lists on every run. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS: Record<string, string[]> = {
  common: [
    'echo',
    'yolop-extension-echo',
    'token',
    'x',
    'a=1',
    '--json',
    '--json',
    '--no-json',
    '--json=true',
    '--',
    '-',
    '',
    '--help',
    '-h',
    '--version',
    '-v',
    '--bogus',
    '-x',
    '-1',
    'uninstall',
  ],
  enable: [
    '--config',
    '-c',
    'endpoint=https://e',
    'mode=fast',
    '--config=mode=slow',
    '--config=',
    '-cmode=fast',
    '--ignore-engines',
    '--no-ignore-engines',
    '-c',
    '--config',
  ],
  'set-secret': ['--stdin', '--unset', '--keychain', '--stdin', '--no-stdin', '--unset=1'],
  verify: ['alpha', 'beta', 'alpha'],
};

describe('fast-cmd-args: the same parse as oclif, or declined', () => {
  it.each(Object.keys(CLASSES))('%s: 3,000 random argument lists', async (id) => {
    const def = defOf(id);
    const words = [...WORDS.common!, ...(WORDS[id] ?? [])];
    const next = rng(id.length * 7919);
    let accepted = 0;
    for (let n = 0; n < 3000; n++) {
      const len = Math.floor(next() * 6);
      const argv = Array.from({ length: len }, () => words[Math.floor(next() * words.length)]!);
      const ours = parseCommandArgs(def, argv);
      if (!ours) continue;
      accepted++;
      const theirs = await oclifParse(CLASSES[id]!, argv);
      expect({ argv, theirs }).toEqual({ argv, theirs: { args: ours.args, flags: ours.flags, argv: ours.argv } });
    }
    // Enough of the lists were plain for the comparison to mean something.
    expect(accepted).toBeGreaterThan(60);
  });

  it('the shapes the CLI tests rely on', () => {
    const defs = Object.keys(CLASSES).map(defOf);
    expect(fastCmdShape(['rm', 'echo', '--json'], defs)).toMatchObject({ command: 'remove', json: true, args: { name: 'echo' }, rest: ['echo', '--json'] });
    expect(fastCmdShape(['enable', 'echo', '-c', 'a=1', '--config=b=2'], defs)).toMatchObject({ command: 'enable', flags: { config: ['a=1', 'b=2'] } });
    expect(fastCmdShape(['verify', 'b', 'a'], defs)).toMatchObject({ command: 'verify', argv: ['b', 'a'], args: { names: 'b' } });
    for (const declined of [
      ['enable'],
      ['enable', 'a', 'b'],
      ['set-secret', 'a', 'b', '--unset', '--stdin'],
      ['enable', 'a', '--config'],
      ['enable', 'a', '-c', '-x'],
      ['disable', 'a', '--help'],
      ['list'],
      ['install', 'a'],
      ['remove', '--', 'a'],
    ]) {
      expect(fastCmdShape(declined, defs), declined.join(' ')).toBeUndefined();
    }
  });
});

describe('static-shape: plain definitions only', () => {
  it('every command with a shared body is plain (the build fails otherwise)', () => {
    for (const id of Object.keys(BODIES)) expect(CLASSES[id], `${id} must be listed in this test`).toBeDefined();
    expect(Object.keys(BODIES).sort()).toEqual(Object.keys(CLASSES).sort());
    for (const id of Object.keys(CLASSES)) defOf(id);
    expect(defOf('remove').names).toEqual(['remove', 'uninstall', 'rm']);
  });

  it('refuses what the parser does not reproduce, naming it', () => {
    const shape = (flags: object, args: object = {}, extra: object = {}) => {
      class C extends Command {
        static override flags = flags as never;
        static override args = args as never;
        async run(): Promise<void> {}
      }
      Object.assign(C, extra);
      const d = staticShape('c', C, ['c']);
      return 'reason' in d ? d.reason : 'plain';
    };
    expect(shape({ a: Flags.string() })).toBe('plain');
    expect(shape({ a: Flags.string({ env: 'A' }) })).toMatch(/env/);
    expect(shape({ a: Flags.string({ default: 'x' }) })).toMatch(/default/);
    expect(shape({ a: Flags.integer() })).toMatch(/parse/);
    expect(shape({ a: Flags.string({ multiple: true }) })).toMatch(/greedy/);
    expect(shape({ a: Flags.string({ dependsOn: ['b'] }), b: Flags.boolean() })).toMatch(/dependsOn/);
    expect(shape({ a: Flags.boolean({ char: 'h' }) })).toMatch(/help/);
    expect(shape({}, { n: Args.string() })).toMatch(/standard input/);
    expect(shape({}, { n: Args.string({ ignoreStdin: true, default: 'x' }) })).toMatch(/default/);
    expect(shape({}, {}, { state: 'deprecated' })).toMatch(/deprecated/);
    expect(
      staticShape(
        'lock',
        class extends Command {
          async run(): Promise<void> {}
        },
        ['lock', 'lock:export'],
      ),
    ).toMatchObject({ reason: /subcommands/ });
  });
});
