/** The body of `yep-ext verify` (src/commands/verify.ts) */
import type { CommandIo, Parsed } from './command.js';
import { green, yellow } from './style.js';
import { sanitize } from '../core/text/sanitize.js';
import { verifyExtensions } from '../core/operations/verify.js';
import { leftoverMessage } from '../core/store/leftovers.js';

/** -q as cargo's: no line per intact extension, only warnings, problems and the one result line. */
export async function verifyCommand(io: CommandIo, { argv, flags }: Parsed): Promise<unknown> {
  const ctx = io.context();
  const report = await verifyExtensions(ctx, argv);
  if (!io.json) {
    for (const e of report.extensions) {
      if (flags.quiet && e.warnings.length === 0) continue;
      io.log(`${green('✔')} ${sanitize(e.name)}`);
      for (const w of e.warnings) io.log(`  ${yellow('warning')}: ${sanitize(w.message)}`);
    }
    for (const l of report.leftovers) io.log(`${yellow('warning')}: ${sanitize(l.name)}: ${sanitize(leftoverMessage(l))}`);
    io.log(`${report.extensions.length} verified.`);
  }
  return report;
}
