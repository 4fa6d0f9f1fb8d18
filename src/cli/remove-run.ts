/** The body of `yep-ext remove` (src/commands/remove.ts) */
import type { CommandIo, Parsed } from './command.js';
import { green } from './style.js';
import { describeLeftovers, removeExtension, type RemoveOutcome } from '../core/operations/remove.js';

/** "Removed lsp." or, for a name that was not installed, what was left of it. */
function removedLine(o: RemoveOutcome): string {
  if (o.removed.store || o.removed.lock) return `Removed ${o.name}.`;
  return `Removed the ${describeLeftovers(o.removed, o.leftovers?.bytes)} ${o.name} left behind (it was not installed).`;
}

export async function removeCommand(
  io: CommandIo,
  { args }: Parsed<unknown, { name: string }>,
): Promise<Omit<RemoveOutcome, 'leftovers'> & { leftovers: RemoveOutcome['leftovers'] | null }> {
  const ctx = io.context();
  const outcome = await removeExtension(ctx, args.name);
  if (!io.json) io.log(`${green('✔')} ${removedLine(outcome)}`);
  return { ...outcome, leftovers: outcome.leftovers ?? null };
}
