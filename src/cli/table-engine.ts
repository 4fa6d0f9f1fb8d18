/**
 * cli-table3 and string-width, the engine for tables with non-ASCII text,
 * loaded only when such a table is drawn (table.ts imports this lazily). Its own
 * module so the `list` fast path (one CommonJS file) can leave it in a file of
 * its own (scripts/build-cli.mjs): ~50 KB that most runs never parse.
 */
export { default as Table } from 'cli-table3';
export { default as stringWidth } from 'string-width';
