/** The body of `yep-ext disable` (src/commands/disable.ts) */
import type { CommandIo, Parsed } from './command.js';
import { renderDisable } from './render-config.js';
import { runDisable, type DisableResult } from '../core/operations/disable.js';

export async function disableCommand(io: CommandIo, { args }: Parsed<unknown, { name: string }>): Promise<DisableResult> {
  const ctx = io.context();
  const result = await runDisable(ctx, args.name);
  io.log(renderDisable(result));
  return result;
}
