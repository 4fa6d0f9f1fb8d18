/**
 * `--min-age` checked when a command starts: resolution reads it only when a crate
 * is resolved, so a typo beside a path or git source would otherwise pass unnoticed.
 */
import { parseDuration } from '../core/text/duration.js';

export function checkMinAge(value: string | undefined): void {
  if (value !== undefined) parseDuration(value, '--min-age');
}
