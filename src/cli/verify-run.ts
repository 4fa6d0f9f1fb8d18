/** The body of `yep-ext verify` (src/commands/verify.ts) */
import type { CommandIo, Parsed } from './command.js';
import { green, yellow } from './style.js';
import { sanitize } from '../core/text/sanitize.js';
import { verifyExtensions } from '../core/operations/verify.js';
import { leftoverMessage } from '../core/store/leftovers.js';

export async function verifyCommand(io: CommandIo, { argv }: Parsed): Promise<unknown> {
  const ctx = io.context();
  const report = await verifyExtensions(ctx, argv);
  if (!io.json) {
    for (const e of report.extensions) {
      io.log(`${green('✔')} ${sanitize(e.name)}`);
      for (const w of e.warnings) io.log(`  ${yellow('warning')}: ${sanitize(w.message)}`);
    }
    for (const l of report.leftovers) io.log(`${yellow('warning')}: ${sanitize(l.name)}: ${sanitize(leftoverMessage(l))}`);
    io.log(`${report.extensions.length} verified.`);
  }
  return report;
}
