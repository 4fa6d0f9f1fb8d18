/** The body of `yep-ext disable` (src/commands/disable.ts) */
import type { CommandIo, Parsed } from './command.js';
import { renderDisable } from './render-config.js';
import { runDisable, type DisableResult } from '../core/operations/disable.js';

export async function disableCommand(io: CommandIo, { args, flags }: Parsed<{ profile?: string | undefined }, { name: string }>): Promise<DisableResult> {
  const ctx = io.context();
  const result = await runDisable(ctx, args.name, flags.profile !== undefined ? { profile: flags.profile } : {});
  io.log(renderDisable(result));
  return result;
}
