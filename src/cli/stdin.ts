/** Reading a secret piped on standard input (`set-secret --stdin`). */
import { YepError } from '../core/errors.js';
import { SECRET_MAX_BYTES } from '../core/settings/secrets.js';
import { Secret } from '../core/settings/secret-value.js';
import type { InStream } from './cli-io.js';

/**
 * The whole of stdin as one secret, minus one trailing newline (`echo` adds it).
 * Refuses a terminal (typing there would echo the value) and oversize input.
 */
export async function readSecretFromStdin(stdin: InStream, target = '<name> <field>'): Promise<Secret> {
  // The command to type names the extension and field being set (`target`), as the other set-secret hints do.
  const pipe = `printf %s "$VALUE" | yep-ext set-secret ${target} --stdin`;
  if (stdin.isTTY) {
    throw new YepError('E_USAGE', '--stdin was given but standard input is a terminal, where the value would be shown as you type.', {
      hint: `Leave out --stdin to get a hidden prompt, or pipe the value: ${pipe}`,
    });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > SECRET_MAX_BYTES)
      throw new YepError('E_USAGE', `Standard input holds more than ${SECRET_MAX_BYTES} bytes; a secret is expected.`, {
        hint: `Pipe the secret alone, e.g. ${pipe}`,
      });
    chunks.push(b);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new YepError('E_USAGE', 'The value on standard input is not UTF-8 text.', { hint: `Pipe the value as text, e.g. ${pipe}` });
  }
  text = text.replace(/\r?\n$/, '');
  if (text.length === 0) throw new YepError('E_USAGE', 'Standard input was empty; no secret was stored.', { hint: `Pipe the value in, e.g. ${pipe}` });
  return new Secret(text);
}
