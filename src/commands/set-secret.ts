import { installedNameArg } from '../cli/common-flags.js';
import { defineCommand } from '../cli/command.js';
import { Args, Flags } from '../cli/flags.js';
import { YepError } from '../core/errors.js';

export default defineCommand({
  summary: 'Store (or remove) a secret config field of an extension.',
  description: `The value is read from a hidden prompt or, with --stdin, from standard input; never from the command line (argv is visible to other users and kept in shell history).
Only fields the extension declares with "secret": true are accepted. Secrets go to connections.toml (mode 0600), the file yolop reads; --keychain stores in the OS keychain instead, which yolop does not read (see docs/secrets.md).`,
  // The host's words (`yolop extensions secret set <name> <field>`), for an agent that learned them.
  aliases: ['secret:set'],
  examples: [
    '<%= config.bin %> set-secret logfire token',
    'printf %s "$LOGFIRE_TOKEN" | <%= config.bin %> set-secret logfire token --stdin',
    '<%= config.bin %> set-secret logfire token --unset',
  ],
  args: {
    name: installedNameArg,
    field: Args.string({ ignoreStdin: true, required: true, description: 'A config field declared "secret": true.' }),
    // A value typed as a third argument must reach the handler to be refused with a
    // clear message and without being echoed (oclif's own "unexpected argument"
    // error would print it; parseError below hides any further ones). Hidden: it
    // is not an argument anyone should give. (Not `strict: false`, which
    // makes help show NAME... FIELD... as lists.)
    value: Args.string({ ignoreStdin: true, hidden: true }),
  },
  flags: {
    stdin: Flags.boolean({ description: 'Read the value from standard input (one trailing newline is dropped).' }),
    unset: Flags.boolean({ description: 'Remove the secret instead of setting it.', exclusive: ['stdin', 'keychain'] }),
    keychain: Flags.boolean({
      description: 'Store in the OS keychain (falls back to connections.toml when none is reachable). yolop does not read the keychain.',
    }),
  },
  /**
   * Parse errors quote the offending argv word, which may be a secret: say what
   * went wrong without it. Missing arguments and flag conflicts (--unset with
   * --stdin) name only declared arguments and flags, so they keep their message.
   */
  parseError(err) {
    if (/^(Missing \d+ required arg|The following errors? occurred)/.test(err.message ?? '')) return undefined;
    return new YepError('E_USAGE', 'set-secret could not parse its options (the offending text is not shown: it may be a secret). Nothing was stored.', {
      hint: 'Usage: yep-ext set-secret <name> <field> [--stdin] [--unset] [--keychain]. A value given on the command line should be considered exposed.',
    });
  },
  async run(io, parsed) {
    return (await import('../cli/set-secret-run.js')).setSecretCommand(io, parsed);
  },
});
