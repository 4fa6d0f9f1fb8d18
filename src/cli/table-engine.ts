/**
 * string-width, the measure of tables with non-ASCII text (wide characters,
 * emoji), loaded only when such a table is drawn (table.ts imports this lazily):
 * most runs never parse it.
 */
export { default as stringWidth } from 'string-width';
