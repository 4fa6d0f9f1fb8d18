/**
 * `list` as people and scripts see it: in a real terminal (util-linux `script`)
 * at 60 and 200 columns, rows never wrap into fragments (no line wider than the
 * terminal, one line per row plus the extra lines of multi-line config cells),
 * cut cells end with …, names stay whole, no borders; piped, tab-separated lines
 * under a header with nothing cut; --json the same either way.
 * `search` (the other table) likewise, against the loopback registry.
 */
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { SKIP_PTY, runCliInPty, screenOf } from '../helpers/pty.js';

/** The output as the terminal shows it (the live wait display erases itself). */
const screened = (r: { code: number | null; output: string }) => ({ ...r, output: screenOf(r.output) });
import { fixtureCrate } from '../helpers/crates.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

let home: TempHome;
let deepDir: string;
const BOX = /[│─┌┐└┘┬┴]/;

/** Terminal columns a line takes (East Asian wide characters count 2). */
const displayWidth = (line: string): number =>
  [...line].reduce((w, ch) => w + (/[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\uff00-\uff60\uffe0-\uffe6]/.test(ch) ? 2 : 1), 0);

beforeAll(async () => {
  home = makeTempHome('yep-list-table-');
  // Long sources and problems (the rows that used to wrap), a config column, a wide-character path.
  deepDir = join(home.root, 'src', 'a-rather-long-directory-name-for-extensions', 'nested', 'deeper-still', 'deep');
  const gone = join(home.root, 'src', 'projects-that-will-be-deleted-soon', 'gone');
  const dirs = [
    writePackage(deepDir, { name: 'deep', version: '1.2.3' }),
    writePackage(gone, { name: 'gone', version: '0.0.1' }),
    writePackage(join(home.root, 'src', '日本語のパス', 'wide'), { name: 'wide' }),
  ];
  for (const dir of dirs) {
    const r = await runCli(['install', dir], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
  }
  mkdirSync(join(home.root, 'work'), { recursive: true });
  symlinkSync(join(REPO_ROOT, 'examples'), join(home.root, 'work', 'examples'));
  expect((await runCli(['install', './examples/echo-node'], { env: home.env, cwd: join(home.root, 'work') })).code).toBe(0);
  rmSync(gone, { recursive: true });
});
afterAll(() => home.cleanup());

describe.skipIf(SKIP_PTY)('list in a terminal', () => {
  it.each([60, 80, 200])(
    'at %i columns: no line of the table wider than the terminal, one line per row, names whole; each problem said whole under it',
    async (cols) => {
      const r = screened(await runCliInPty(['list'], { env: home.env, cols }));
      expect(r.code, r.output).toBe(0);
      const [tablePart = '', notes = ''] = r.output.replace(/\n$/, '').split('\n\n');
      const lines = tablePart.split('\n');
      for (const line of lines) expect(displayWidth(line), line).toBeLessThanOrEqual(cols);
      // The problem cut in its cell is said whole below, with what to do about it (as the piped row has it).
      const piped = (await runCli(['list'], { env: home.env })).stdout
        .split('\n')
        .find((l) => l.startsWith('gone\t'))!
        .split('\t')[5]!;
      expect(piped.length).toBeGreaterThan(40);
      for (const line of notes.split('\n')) expect(displayWidth(line), line).toBeLessThanOrEqual(cols);
      // Every character, in order (a path longer than the line is split inside).
      expect(notes.replace(/\s+/g, '')).toBe(`gone: ${piped}`.replace(/\s+/g, ''));
      expect(notes.startsWith('gone: missing:')).toBe(true);
      // Borderless columns under a header (as gh prints lists): no box characters.
      expect(r.output).not.toMatch(BOX);
      expect(lines[0]).toMatch(/^name +version +enabled +source/);
      // Header + 4 rows (echo-node's config cell is one field: one line): nothing wrapped.
      expect(lines).toHaveLength(5);
      for (const name of ['deep', 'echo-node', 'gone', 'wide']) expect(r.output).toMatch(new RegExp(`^${name} +\\S`, 'm'));
      // The sources and problems here are ~100 characters: cut even at 200.
      expect(r.output).toContain('…');
      // The problem is still said, even when cut.
      expect(r.output).toMatch(/^gone .* miss/m);
    },
  );

  it('wider than the content (400 columns): nothing is cut', async () => {
    const r = screened(await runCliInPty(['list'], { env: home.env, cols: 400 }));
    expect(r.output).not.toContain('…');
    expect(r.output).toContain(deepDir);
  });

  it('COLUMNS overrides the terminal width', async () => {
    const r = screened(await runCliInPty(['list'], { env: { ...home.env, COLUMNS: '70' }, cols: 200 }));
    for (const line of r.output.trimEnd().split('\n')) expect(displayWidth(line), line).toBeLessThanOrEqual(70);
    expect(r.output).toContain('…');
  });

  it('--json is the same document in a terminal and in a pipe', async () => {
    const tty = screened(await runCliInPty(['list', '--json'], { env: home.env, cols: 60 }));
    const piped = await runCli(['list', '--json'], { env: home.env });
    expect(JSON.parse(tty.output)).toEqual(jsonOf(piped));
  });
});

describe('list piped', () => {
  it('tab-separated under a header, nothing cut, no box characters', async () => {
    const r = await runCli(['list'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.replace(/\n$/, '').split('\n');
    expect(lines[0]).toBe('name\tversion\tenabled\tsource\tconfig\tproblems');
    expect(lines).toHaveLength(5);
    for (const line of lines) expect(line.split('\t')).toHaveLength(6);
    expect(r.stdout).not.toMatch(BOX);
    expect(r.stdout).not.toContain('…');
    expect(lines).toContain(`deep\t1.2.3\tno\t${deepDir}\t\t`);
    expect(r.stdout).toMatch(/^gone\t0\.0\.1\tno\t.*\tmissing: the linked directory .* is gone/m);
    expect(r.stdout).toMatch(/^echo-node\t0\.1\.0\tno\t.*\tgreeting: unset \(default\)\t$/m);
  });

  it('also through `ls` and with COLUMNS set (a pipe is never a terminal)', async () => {
    const r = await runCli(['ls'], { env: { ...home.env, COLUMNS: '40' } });
    expect(r.stdout.split('\n')[0]).toBe('name\tversion\tenabled\tsource\tconfig\tproblems');
    expect(r.stdout).not.toMatch(BOX);
  });
});

describe('search tables', () => {
  let reg: TestRegistry;
  const long = 'Says hello in every language there is, with a description long enough to be cut in any terminal narrower than the table';
  beforeAll(async () => {
    reg = await startRegistry();
    reg.publish({
      name: 'yolop-extension-hello',
      vers: '0.3.1',
      data: fixtureCrate('yolop-extension-hello', '0.3.1'),
      keywords: ['yolop-extension'],
      description: long,
      downloads: 42,
    });
  });
  afterAll(() => reg.close());
  const env = () => ({ ...home.env, YEP_EXT_INDEX: reg.indexUrl });

  it.skipIf(SKIP_PTY)('in a 60-column terminal: fitted, cut with …', async () => {
    const r = screened(await runCliInPty(['search'], { env: env(), cols: 60 }));
    expect(r.code, r.output).toBe(0);
    const lines = r.output.trimEnd().split('\n');
    for (const line of lines) expect(displayWidth(line), line).toBeLessThanOrEqual(60);
    expect(lines).toHaveLength(2);
    expect(r.output).toMatch(/^hello +0\.3\.1/m);
    expect(r.output).toContain('…');
  });

  it('piped: tab-separated, the whole description', async () => {
    const r = await runCli(['search'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`name\tversion\tdownloads\tdescription\tinstalled\nhello\t0.3.1\t42\t${long}\t\n`);
  });
});
