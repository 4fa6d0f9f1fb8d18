/** Tables for lists (cli-table3), colourless unless colour is on; compact borders. */
import Table from 'cli-table3';

export function renderTable(head: string[], rows: string[][]): string {
  const table = new Table({
    head,
    style: { head: [], border: [], compact: true },
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    wordWrap: true,
  });
  table.push(...rows);
  return table.toString();
}
