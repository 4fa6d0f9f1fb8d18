import { describe, expect, it } from 'vitest';
import { renderTable, renderTableWithCliTable3 } from '../../src/cli/table.js';

/** Deterministic pseudo-random cells: printable ASCII and newlines, including runs of spaces, empty lines and empty cells. */
function cells(seed: number, count: number): string[] {
  let s = seed;
  const rnd = (n: number) => ((s = (s * 1103515245 + 12345) >>> 0) % n);
  return Array.from({ length: count }, () => {
    const len = rnd(4) === 0 ? 0 : rnd(30);
    return Array.from({ length: len }, () => (rnd(5) === 0 ? ' ' : rnd(12) === 0 ? '\n' : String.fromCharCode(0x20 + rnd(95)))).join('');
  });
}

describe('renderTable', () => {
  it('draws printable-ASCII tables exactly as cli-table3 does', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const columns = 1 + (seed % 5);
      const head = seed % 7 === 0 ? [] : cells(seed, columns);
      const rows = Array.from({ length: seed % 9 }, (_, i) => cells(seed * 31 + i, columns));
      if (head.length === 0 && rows.length === 0) continue;
      expect(renderTable(head, rows), `seed ${seed}`).toBe(renderTableWithCliTable3(head, rows));
    }
  });

  it('hands wide characters, emoji and tabs to cli-table3 (its width rules)', () => {
    for (const text of ['日本語', 'emoji 🎉 here', 'tab\there', 'é accented']) {
      const head = ['name', 'value'];
      const rows = [['a', text], ['bb', 'plain']];
      expect(renderTable(head, rows)).toBe(renderTableWithCliTable3(head, rows));
    }
    // And the wide row really is measured by display width, not code units.
    const out = renderTable(['x'], [['日本']]).split('\n');
    expect(out[0]).toBe('┌──────┐');
  });

  it('draws a multi-line cell as extra lines of its row', () => {
    expect(renderTable(['k', 'config'], [['a', 'x: set\ny (secret): unset'], ['b', '']]).split('\n')).toEqual([
      '┌───┬───────────────────┐',
      '│ k │ config            │',
      '│ a │ x: set            │',
      '│   │ y (secret): unset │',
      '│ b │                   │',
      '└───┴───────────────────┘',
    ]);
  });

  it('keeps the compact shape: no rule between the header and the rows', () => {
    expect(renderTable(['name', 'v'], [['lsp', '1.0.0']])).toBe('┌──────┬───────┐\n│ name │ v     │\n│ lsp  │ 1.0.0 │\n└──────┴───────┘');
  });
});
