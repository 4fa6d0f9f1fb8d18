/** The body of `yep-ext enable` (src/commands/enable.ts), shared with the oclif-free runner (command-bodies.ts). */
import type { CommandIo } from './command-io.js';
import type { ParsedCommand } from './command-bodies.js';
import { cliPrompter } from './prompts.js';
import { renderEnable } from './render-config.js';
import { runEnable, type EnableResult } from '../core/operations/enable.js';

export async function enableCommand(io: CommandIo, { args, flags }: ParsedCommand): Promise<EnableResult> {
  const ctx = io.makeContext({});
  const result = await runEnable(ctx, args.name as string, {
    config: (flags.config as string[] | undefined) ?? [],
    prompter: cliPrompter(),
    ignoreEngines: flags['ignore-engines'] as boolean | undefined,
    ...(flags.profile !== undefined ? { profile: flags.profile as string } : {}),
  });
  io.log(renderEnable(result));
  return result;
}
