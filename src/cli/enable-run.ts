/** The body of `yep-ext enable` (src/commands/enable.ts) */
import type { CommandIo, Parsed } from './command.js';
import { cliPrompter } from './prompts.js';
import { renderEnable } from './render-config.js';
import { runEnable, type EnableResult } from '../core/operations/enable.js';

export async function enableCommand(
  io: CommandIo,
  { args, flags }: Parsed<{ config?: string[] | undefined; 'ignore-engines': boolean; profile?: string | undefined }, { name: string }>,
): Promise<EnableResult> {
  const ctx = io.context();
  const result = await runEnable(ctx, args.name, {
    config: flags.config ?? [],
    prompter: cliPrompter(io.io),
    ignoreEngines: flags['ignore-engines'],
    ...(flags.profile !== undefined ? { profile: flags.profile } : {}),
  });
  io.log(renderEnable(result, flags.quiet === true));
  return result;
}
