import { describe, expect, it } from 'vitest';
import { fitColumns, renderRows, renderTable, renderTsv } from '../../src/cli/table.js';

/** Deterministic pseudo-random cells: printable ASCII and newlines, including runs of spaces, empty lines and empty cells. */
function cells(seed: number, count: number): string[] {
  let s = seed;
  const rnd = (n: number) => {
    s = (s * 1103515245 + 12345) >>> 0;
    return s % n;
  };
  return Array.from({ length: count }, () => {
    const len = rnd(4) === 0 ? 0 : rnd(30);
    return Array.from({ length: len }, () => (rnd(5) === 0 ? ' ' : rnd(12) === 0 ? '\n' : String.fromCharCode(0x20 + rnd(95)))).join('');
  });
}

/** Display width of a line, counting East Asian wide characters and emoji as 2 (what a terminal does). */
const displayWidth = (line: string): number =>
  [...line].reduce(
    (w, ch) =>
      w + (/[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]|\p{Extended_Pictographic}/u.test(ch) ? 2 : 1),
    0,
  );

describe('renderTable: borderless columns', () => {
  it('columns two spaces apart under the header, no border and no trailing spaces', async () => {
    expect(
      await renderTable(
        ['name', 'v'],
        [
          ['lsp', '1.0.0'],
          ['a-longer-name', '2'],
        ],
      ),
    ).toBe('name           v\nlsp            1.0.0\na-longer-name  2');
  });

  it('draws a multi-line cell as extra lines of its row', async () => {
    expect(
      (
        await renderTable(
          ['k', 'config', 'x'],
          [
            ['a', 'x: set\ny (secret): unset', '1'],
            ['b', '', '2'],
          ],
        )
      ).split('\n'),
    ).toEqual(['k  config             x', 'a  x: set             1', '   y (secret): unset', 'b                     2']);
  });

  it('wide characters, emoji and tabs are measured in display columns, so later columns line up', async () => {
    const out = (
      await renderTable(
        ['name', 'value', 'z'],
        [
          ['日本語', 'emoji 🎉 here', 'z'],
          ['tab\there', 'é accented', 'z'],
          ['ascii', 'plain', 'z'],
        ],
      )
    ).split('\n');
    const zAt = out.map((l) => displayWidth(l.slice(0, l.lastIndexOf('z'))));
    expect(new Set(zAt).size, out.join('\n')).toBe(1);
    expect(out.join('\n')).not.toContain('\t');
  });

  it('random ASCII tables: every character of every cell is there, nothing else', async () => {
    for (let seed = 1; seed <= 150; seed++) {
      const columns = 1 + (seed % 5);
      const head = cells(seed, columns);
      const rows = Array.from({ length: 1 + (seed % 6) }, (_, i) => cells(seed * 31 + i, columns));
      const out = await renderTable(head, rows);
      const chars = (t: string) => [...t.replace(/\s+/g, '')].sort().join('');
      expect(chars(out), `seed ${seed}`).toBe(chars([head, ...rows].flat().join('')));
    }
  });
});

describe('fitted to a terminal width', () => {
  const head = ['name', 'version', 'source', 'problems'];
  const rows = [
    ['alpha', '1.2.3', 'path:/home/someone/projects/extensions/alpha', ''],
    ['gone', '0.1.0', 'path:/home/someone/projects/extensions/gone', 'missing: the linked directory /home/someone/projects/extensions/gone is gone'],
    ['drift', '0.3.0', 'crates.io:yolop-extension-drift@0.3.0', 'hash drift: files changed since install'],
  ];

  it.each([40, 60, 80, 120, 200])('no line is wider than %i columns, one line per row, cut lines end with …', async (width) => {
    const out = await renderTable(head, rows, width);
    for (const line of out.split('\n')) expect(line.length, line).toBeLessThanOrEqual(width);
    expect(out.split('\n')).toHaveLength(rows.length + 1);
    if (width < 140) expect(out).toContain('…');
    else expect(out).not.toContain('…');
    // The narrow columns stay whole: names and versions are never cut at 60 and up.
    if (width >= 60) for (const [name, version = ''] of rows) expect(out).toMatch(new RegExp(`^${name} +${version.replace(/\./g, '\\.')} `, 'm'));
  });

  it('random ASCII tables stay within the width', async () => {
    for (let seed = 1; seed <= 120; seed++) {
      const columns = 1 + (seed % 6);
      const head = cells(seed, columns);
      const rows = Array.from({ length: 1 + (seed % 5) }, (_, i) => cells(seed * 17 + i, columns));
      const width = 20 + ((seed * 7) % 90);
      const out = await renderTable(head, rows, width);
      const minimal = 2 * (columns - 1) + 3 * columns;
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
    expect(w.reduce((a, b) => a + b, 0)).toBe(60 - 2 * 3);
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
      const at = lines[0]!.indexOf('status');
      const cell = lines
        .slice(1)
        .map((l) => l.slice(at).trim())
        .join('');
      expect(cell.replace(/\s+/g, '')).toBe(status.replace(/\s+/g, ''));
    }
  });

  it('breaks at spaces first, a long word after a - or @, and leaves a cell that fits alone', async () => {
    const out = await renderRows(['s'], [['aaa bbb language-server-protocol@^0.2']], { tty: true, width: 16 }, { wrap: 0 });
    expect(out.split('\n')).toEqual(['s', 'aaa bbb', 'language-server-', 'protocol@^0.2']);
    expect(await renderRows(['s'], [['fits']], { tty: true, width: 80 }, { wrap: 0 })).toBe(await renderRows(['s'], [['fits']], { tty: true, width: 80 }));
  });
});

describe('not a terminal: tab-separated with a header', () => {
  it('one line per row, tabs between cells, nothing cut', async () => {
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
    expect(renderTsv(['n'], [['x'.repeat(500)]])).toContain('x'.repeat(500));
    // A line in parentheses is a note on the one before: joined with a space, not ", (".
    expect(renderTsv(['s'], [['0.2.0 exists outside ^0.1: `yep-ext install hello@^0.2`\n(newer versions not checked)']])).toBe(
      's\n0.2.0 exists outside ^0.1: `yep-ext install hello@^0.2` (newer versions not checked)',
    );
  });

  it('a terminal gets aligned columns, a pipe gets tabs', async () => {
    expect(await renderRows(['name', 'v'], [['a', '1']], { tty: true, width: 80 })).toBe('name  v\na     1');
    expect(await renderRows(['name', 'v'], [['a', '1']], { tty: false, width: 0 })).toBe('name\tv\na\t1');
  });
});
