/**
 * `--min-age` checked when a command starts: resolution reads it only when a crate
 * is resolved, so a typo beside a path or git source would otherwise pass unnoticed.
 * Its own module (not base-command.ts) so the oclif-free runner can use it.
 */
import { parseDuration } from '../core/text/duration.js';

export function checkMinAge(value: string | undefined): void {
  if (value !== undefined) parseDuration(value, '--min-age');
}
