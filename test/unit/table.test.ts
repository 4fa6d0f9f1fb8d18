import { describe, expect, it } from 'vitest';
import { fitColumns, renderRows, renderTable, renderTableWithCliTable3, renderTsv } from '../../src/cli/table.js';

/** Deterministic pseudo-random cells: printable ASCII and newlines, including runs of spaces, empty lines and empty cells. */
function cells(seed: number, count: number): string[] {
  let s = seed;
  const rnd = (n: number) => (s = (s * 1103515245 + 12345) >>> 0) % n;
  return Array.from({ length: count }, () => {
    const len = rnd(4) === 0 ? 0 : rnd(30);
    return Array.from({ length: len }, () => (rnd(5) === 0 ? ' ' : rnd(12) === 0 ? '\n' : String.fromCharCode(0x20 + rnd(95)))).join('');
  });
}

describe('renderTable', () => {
  it('draws printable-ASCII tables exactly as cli-table3 does', async () => {
    for (let seed = 1; seed <= 200; seed++) {
      const columns = 1 + (seed % 5);
      const head = seed % 7 === 0 ? [] : cells(seed, columns);
      const rows = Array.from({ length: seed % 9 }, (_, i) => cells(seed * 31 + i, columns));
      if (head.length === 0 && rows.length === 0) continue;
      expect(await renderTable(head, rows), `seed ${seed}`).toBe(await renderTableWithCliTable3(head, rows));
    }
  });

  it('hands wide characters, emoji and tabs to cli-table3 (its width rules)', async () => {
    for (const text of ['日本語', 'emoji 🎉 here', 'tab\there', 'é accented']) {
      const head = ['name', 'value'];
      const rows = [
        ['a', text],
        ['bb', 'plain'],
      ];
      expect(await renderTable(head, rows)).toBe(await renderTableWithCliTable3(head, rows));
    }
    // And the wide row really is measured by display width, not code units.
    const out = (await renderTable(['x'], [['日本']])).split('\n');
    expect(out[0]).toBe('┌──────┐');
  });

  it('draws a multi-line cell as extra lines of its row', async () => {
    expect(
      (
        await renderTable(
          ['k', 'config'],
          [
            ['a', 'x: set\ny (secret): unset'],
            ['b', ''],
          ],
        )
      ).split('\n'),
    ).toEqual([
      '┌───┬───────────────────┐',
      '│ k │ config            │',
      '│ a │ x: set            │',
      '│   │ y (secret): unset │',
      '│ b │                   │',
      '└───┴───────────────────┘',
    ]);
  });

  it('keeps the compact shape: no rule between the header and the rows', async () => {
    expect(await renderTable(['name', 'v'], [['lsp', '1.0.0']])).toBe('┌──────┬───────┐\n│ name │ v     │\n│ lsp  │ 1.0.0 │\n└──────┴───────┘');
  });
});

/** Display width of a line, counting East Asian wide characters as 2 (what a terminal does). */
const displayWidth = (line: string): number =>
  [...line].reduce((w, ch) => w + (/[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/.test(ch) ? 2 : 1), 0);

describe('fitted to a terminal width', () => {
  const head = ['name', 'version', 'source', 'problems'];
  const rows = [
    ['alpha', '1.2.3', 'path:/home/someone/projects/extensions/alpha', ''],
    ['gone', '0.1.0', 'path:/home/someone/projects/extensions/gone', 'missing: the linked directory /home/someone/projects/extensions/gone is gone'],
    ['drift', '0.3.0', 'crates.io:yolop-extension-drift@0.3.0', 'hash drift: files changed since install'],
  ];

  it.each([40, 60, 80, 120, 200])('no line is wider than %i columns, cut lines end with …, ASCII and cli-table3 agree', async (width) => {
    const out = await renderTable(head, rows, width);
    for (const line of out.split('\n')) expect(line.length, line).toBeLessThanOrEqual(width);
    // Every row is one line (no cell holds a newline here): never wrapped into fragments.
    expect(out.split('\n')).toHaveLength(rows.length + 3);
    expect(out).toBe(await renderTableWithCliTable3(head, rows, width));
    if (width < 150) expect(out).toContain('…');
    else expect(out).not.toContain('…');
    // The narrow columns stay whole: names and versions are never cut at 60 and up.
    if (width >= 60) for (const [name, version] of rows) expect(out).toMatch(new RegExp(`│ ${name} +│ ${version} +│`));
  });

  it('random ASCII tables: fitted output is identical to cli-table3 and within the width', async () => {
    for (let seed = 1; seed <= 120; seed++) {
      const columns = 1 + (seed % 6);
      const head = cells(seed, columns);
      const rows = Array.from({ length: 1 + (seed % 5) }, (_, i) => cells(seed * 17 + i, columns));
      const width = 20 + ((seed * 7) % 90);
      const out = await renderTable(head, rows, width);
      expect(out, `seed ${seed}`).toBe(await renderTableWithCliTable3(head, rows, width));
      const minimal = 3 * columns + 1 + 3 * columns;
      if (width >= minimal) for (const line of out.split('\n')) expect(line.length, `seed ${seed}`).toBeLessThanOrEqual(width);
    }
  });

  it('wide characters are measured by display width when fitting', async () => {
    const out = await renderTable(['name', 'source'], [['wide', 'path:/src/ünïcödé-日本-and-a-long-tail-of-directories/here']], 40);
    for (const line of out.split('\n')) expect(displayWidth(line), line).toBeLessThanOrEqual(40);
    expect(out).toContain('…');
  });

  it('fitColumns narrows the widest columns first and keeps headers whole when it can', () => {
    expect(fitColumns([5, 7, 50, 60], [4, 7, 6, 8], 200)).toEqual([5, 7, 50, 60]);
    const w = fitColumns([5, 7, 50, 60], [4, 7, 6, 8], 60);
    expect(w.slice(0, 2)).toEqual([5, 7]);
    expect(w.reduce((a, b) => a + b, 0)).toBe(60 - (3 * 4 + 1));
    expect(Math.abs(w[2]! - w[3]!)).toBeLessThanOrEqual(1);
    // Too narrow even for the headers: down to 3 columns each, never negative.
    expect(fitColumns([5, 7, 50, 60], [4, 7, 6, 8], 10)).toEqual([3, 3, 3, 3]);
  });
});

describe('a column that folds instead of being cut (renderRows wrap)', () => {
  const status = 'update: `yep-ext update language-server-protocol` and 0.2.0 exists outside ^0.1: `yep-ext install language-server-protocol@^0.2`';
  const rows = [['language-server-protocol', '0.1.0', status]];

  it('fits the width, cuts nothing, and keeps every character of the cell in order', async () => {
    for (const width of [60, 80, 100, 120]) {
      const out = await renderRows(['name', 'current', 'status'], rows, { tty: true, width }, { wrap: 2 });
      const lines = out.split('\n');
      for (const l of lines) expect(l.length, `${width}: ${l}`).toBeLessThanOrEqual(width);
      expect(out, String(width)).not.toContain('…');
      const cell = lines
        .slice(1, -1)
        .map((l) => l.split('│').at(-2)!.trim())
        .join('');
      expect(cell.replace(/\s+/g, '')).toContain(status.replace(/\s+/g, ''));
    }
  });

  it('breaks at spaces first, a long word after a - or @, and leaves a cell that fits alone', async () => {
    const out = await renderRows(['s'], [['aaa bbb language-server-protocol@^0.2']], { tty: true, width: 20 }, { wrap: 0 });
    const inner = out
      .split('\n')
      .slice(1, -1)
      .map((l) => l.slice(2, -2).trimEnd());
    expect(inner).toEqual(['s', 'aaa bbb', 'language-server-', 'protocol@^0.2']);
    expect(await renderRows(['s'], [['fits']], { tty: true, width: 80 }, { wrap: 0 })).toBe(await renderRows(['s'], [['fits']], { tty: true, width: 80 }));
  });
});

describe('not a terminal: tab-separated with a header', () => {
  it('one line per row, tabs between cells, no borders, nothing cut', async () => {
    const out = await renderRows(
      ['name', 'config'],
      [
        ['a', 'x: set\ny (secret): unset'],
        ['b', ''],
        ['c', 'has\ttab'],
      ],
      { tty: false, width: 0 },
    );
    expect(out).toBe('name\tconfig\na\tx: set, y (secret): unset\nb\t\nc\thas tab');
    expect(out).not.toMatch(/[│─┌┐└┘]/);
    expect(renderTsv(['n'], [['x'.repeat(500)]])).toContain('x'.repeat(500));
  });

  it('a terminal gets the boxes', async () => {
    expect(await renderRows(['name'], [['a']], { tty: true, width: 80 })).toBe('┌──────┐\n│ name │\n│ a    │\n└──────┘');
  });
});
