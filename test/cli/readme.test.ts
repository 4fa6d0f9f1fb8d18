/**
 * The README's commands table says what the CLI does: every visible command has
 * a row, each row's aliases are the command's, and each row's example is one of
 * the examples its `--help` prints (so neither drifts from the other). Also: the
 * README's links point inside the repository, and its exit-code summary names
 * every exit status of docs/exit-codes.md.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, makeTempHome, runCli, type TempHome } from '../helpers/home.js';

interface Row {
  command: string;
  aliases: string[];
  example: string;
}

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

function commandsTable(): Row[] {
  // The rows of the first table after the heading (the next table, Sources, is not commands).
  const section = README.slice(README.indexOf('## Commands')).split('\n');
  const start = section.findIndex((l) => l.startsWith('|'));
  const end = section.findIndex((l, i) => i > start && !l.startsWith('|'));
  const lines = section.slice(start, end).filter((l) => l.startsWith('| `'));
  return lines.map((l) => {
    const cells = l
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim().replace(/\\\|/g, '|'));
    const ticks = (text: string): string[] => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const [first = '', ...aliases] = ticks(cells[0] ?? '');
    return {
      command: first
        .split(' ')
        .filter((w) => !w.startsWith('-'))
        .join(' '),
      aliases,
      example: ticks(cells[1] ?? '')[0] ?? '',
    };
  });
}

/** The example lines of a --help text (without the `$ ` prompt). */
function helpExamples(help: string): string[] {
  const section = help.slice(help.indexOf('\nEXAMPLES\n') + '\nEXAMPLES\n'.length);
  return section
    .split('\n')
    .filter((l) => l.startsWith('  ') && l.trim() !== '')
    .map((l) => l.trim().replace(/^\$ /, ''));
}

let home: TempHome;
beforeAll(() => {
  home = makeTempHome('yep-readme-');
});
afterAll(() => home.cleanup());

describe('README commands table', () => {
  const rows = commandsTable();
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'oclif.manifest.json'), 'utf8')) as {
    commands: Record<string, { hidden?: boolean; aliases?: string[] }>;
  };
  const commands = Object.entries(manifest.commands)
    .filter(([, c]) => !c.hidden)
    .map(([id, c]) => ({ id: id.split(':').join(' '), aliases: (c.aliases ?? []).map((a) => a.split(':').join(' ')) }));

  it('has a row for every command, with its aliases', () => {
    expect(rows.length).toBeGreaterThanOrEqual(commands.length);
    for (const c of commands) {
      const row = rows.find((r) => r.command === c.id);
      expect(row, `README has no row for ${c.id}`).toBeDefined();
      expect(row!.aliases.sort(), c.id).toEqual([...c.aliases].sort());
    }
    for (const r of rows)
      expect(
        commands.map((c) => c.id),
        `README row ${r.command} names no command`,
      ).toContain(r.command);
  });

  it.each(rows.map((r) => [r.example, r] as const))('%s is an example of its --help', async (_example, row) => {
    // `help --help` is the root help (oclif reads "help" as asking for help): `help`'s own page is `help help`… also the root.
    // So for `help` the examples come from the manifest, which is what its page would print.
    const help = await runCli([...row.command.split(' '), '--help'], { env: home.env });
    expect(help.code).toBe(0);
    const examples =
      row.command === 'help'
        ? ((manifest.commands.help as { examples?: string[] }).examples ?? []).map((e) => e.replace('<%= config.bin %>', 'yep-ext'))
        : helpExamples(help.stdout);
    expect(examples.length, `${row.command} --help has no EXAMPLES`).toBeGreaterThan(0);
    expect(examples).toContain(row.example);
  });
});

describe('README', () => {
  it('links only to files in this repository', () => {
    for (const [, target] of README.matchAll(/\]\(([^)#]+)(?:#[^)]*)?\)/g)) {
      if (/^https?:/.test(target!)) continue;
      expect(existsSync(join(REPO_ROOT, target!)), target).toBe(true);
      expect(join(REPO_ROOT, target!).startsWith(`${REPO_ROOT}/`), `${target} leaves the repository`).toBe(true);
    }
  });

  it('names every exit status of docs/exit-codes.md', () => {
    const table = readFileSync(join(REPO_ROOT, 'docs', 'exit-codes.md'), 'utf8');
    const statuses = [...table.matchAll(/^\| (\d+) \|/gm)].map((m) => m[1]!);
    expect(statuses).toEqual(expect.arrayContaining(['0', '1', '2', '12', '70', '130']));
    const summary = README.slice(README.indexOf('## Exit codes'), README.indexOf('Full table'));
    for (const s of statuses) expect(summary, `exit ${s}`).toContain(`\`${s}\``);
  });
});
