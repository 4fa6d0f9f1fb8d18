/**
 * The CLI runs from an esbuild bundle (scripts/build-cli.mjs): every command file
 * in src/commands must reach the bundle, the manifest and `--help`, and each
 * bundled command must load and run on its own (its chunks are complete).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, makeTempHome, runCli } from '../helpers/home.js';

function commandIds(): string[] {
  const dir = join(REPO_ROOT, 'src', 'commands');
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.ts') ? [join(d, e.name)] : []));
  return walk(dir)
    .map((f) => relative(dir, f).replace(/\.ts$/, '').split('/').filter((p) => p !== 'index').join(':'))
    .sort();
}

describe('the bundled CLI', () => {
  const ids = commandIds();

  it('has every command of src/commands in oclif.manifest.json, bundled', () => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'oclif.manifest.json'), 'utf8')) as { commands: Record<string, { relativePath: string[] }> };
    expect(Object.keys(manifest.commands).sort()).toEqual(ids);
    for (const id of ids) expect(manifest.commands[id]!.relativePath.slice(0, 3)).toEqual(['dist', 'bundle', 'commands']);
  });

  it("keeps the table engine out of the list fast path's bundle (it is required from table-engine.cjs only when a table is drawn)", () => {
    const fast = readFileSync(join(REPO_ROOT, 'dist', 'bundle', 'fast-path.cjs'), 'utf8');
    expect(fast).not.toMatch(/require_cli_table3/);
    expect(fast).toContain('./table-engine.cjs');
  });

  it('lists every command in --help, and each one loads and prints its own help', async () => {
    const home = makeTempHome();
    try {
      const help = await runCli(['--help'], { env: home.env });
      expect(help.code).toBe(0);
      // Root help shows topics (lock) rather than their commands (lock export).
      for (const id of ids) expect(help.stdout).toContain(id.split(':')[0]);
      for (const id of ids) {
        const r = await runCli([...id.split(':'), '--help'], { env: home.env });
        expect(r.code, `${id}: ${r.stderr}`).toBe(0);
        expect(r.stdout).toContain('USAGE');
      }
    } finally {
      home.cleanup();
    }
  });
});
