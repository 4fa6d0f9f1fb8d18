/** The body of `yep-ext set-secret` (src/commands/set-secret.ts) */
import type { CommandIo, Parsed } from './command.js';
import { promptSecret } from './prompts.js';
import { renderSetSecret } from './render-config.js';
import { readSecretFromStdin } from './stdin.js';
import { YepError } from '../core/errors.js';
import { runSetSecret, type SetSecretResult } from '../core/operations/set-secret.js';

export async function setSecretCommand(
  io: CommandIo,
  { args, flags }: Parsed<{ stdin: boolean; unset: boolean; keychain: boolean }, { name: string; field: string; value?: string | undefined }>,
): Promise<SetSecretResult> {
  if (args.value !== undefined) {
    throw new YepError(
      'E_USAGE',
      'set-secret does not take the value as an argument: command lines are visible to other users (ps) and saved in shell history. Nothing was stored.',
      {
        hint: `Run \`yep-ext set-secret ${args.name} ${args.field}\` for a hidden prompt, or pipe the value with --stdin. Consider the value you typed exposed.`,
      },
    );
  }
  const ctx = io.context();
  const result = await runSetSecret(ctx, args.name, args.field, {
    unset: flags.unset,
    keychain: flags.keychain,
    readValue: async (field, extension, validate) => {
      if (flags.stdin) return readSecretFromStdin(io.io.stdin, `${extension} ${field.key}`);
      if (!ctx.interactive) {
        throw new YepError('E_USAGE', 'No terminal to prompt on and no --stdin: nothing was stored.', {
          hint: `Pipe the value: printf %s "$VALUE" | yep-ext set-secret ${extension} ${field.key} --stdin`,
        });
      }
      return promptSecret(io.io, `${extension}.${field.key} (hidden)`, validate);
    },
  });
  io.log(renderSetSecret(result));
  return result;
}
