/** The body of `yep-ext disable` (src/commands/disable.ts), shared with the oclif-free runner (command-bodies.ts). */
import type { CommandIo } from './command-io.js';
import type { ParsedCommand } from './command-bodies.js';
import { renderDisable } from './render-config.js';
import { runDisable, type DisableResult } from '../core/operations/disable.js';

export async function disableCommand(io: CommandIo, { args, flags }: ParsedCommand): Promise<DisableResult> {
  const ctx = io.makeContext({});
  const result = await runDisable(ctx, args.name as string, flags.profile !== undefined ? { profile: flags.profile as string } : {});
  io.log(renderDisable(result));
  return result;
}
