import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { setSecretCommand } from '../cli/set-secret-run.js';
import { YepError, isYepError } from '../core/errors.js';
import type { SetSecretResult } from '../core/operations/set-secret.js';

export default class SetSecret extends BaseCommand {
  static override summary = 'Store (or remove) a secret config field of an extension.';

  static override description =
    `The value is read from a hidden prompt or, with --stdin, from standard input; never from the command line (argv is visible to other users and kept in shell history).
Only fields the extension declares with "secret": true are accepted. Secrets go to connections.toml (mode 0600), the file yolop reads; --keychain stores in the OS keychain instead, which yolop does not read (see docs/secrets.md).`;

  static override examples = [
    '<%= config.bin %> set-secret logfire token',
    'printf %s "$LOGFIRE_TOKEN" | <%= config.bin %> set-secret logfire token --stdin',
    '<%= config.bin %> set-secret logfire token --unset',
  ];

  static override args = {
    name: Args.string({ ignoreStdin: true, required: true, description: 'Extension name (the crate spelling works too).' }),
    field: Args.string({ ignoreStdin: true, required: true, description: 'A config field declared "secret": true.' }),
    // A value typed as a third argument must reach run() to be refused with a
    // clear message and without being echoed (oclif's own "unexpected argument"
    // error would print it; catch() below hides any further ones). Hidden: it
    // is not an argument anyone should give. (Not `strict = false`, which
    // makes help show NAME... FIELD... as lists.)
    value: Args.string({ ignoreStdin: true, hidden: true }),
  };

  static override flags = {
    stdin: Flags.boolean({ description: 'Read the value from standard input (one trailing newline is dropped).' }),
    unset: Flags.boolean({ description: 'Remove the secret instead of setting it.', exclusive: ['stdin', 'keychain'] }),
    keychain: Flags.boolean({
      description: 'Store in the OS keychain (falls back to connections.toml when none is reachable). yolop does not read the keychain.',
    }),
  };

  /**
   * Parse errors quote the offending argv word, which may be a secret: say what
   * went wrong without it. Missing arguments and flag conflicts (--unset with
   * --stdin) name only declared arguments and flags, so they keep their message.
   */
  protected override async catch(err: Error & { oclif?: { exit?: number } }): Promise<unknown> {
    if (
      !isYepError(err) &&
      err.oclif?.exit !== undefined &&
      err.oclif.exit !== 0 &&
      !/^(Missing \d+ required arg|The following errors? occurred)/.test(err.message ?? '')
    ) {
      return super.catch(
        new YepError('E_USAGE', 'set-secret could not parse its options (the offending text is not shown: it may be a secret). Nothing was stored.', {
          hint: 'Usage: yep-ext set-secret <name> <field> [--stdin] [--unset] [--keychain]. A value given on the command line should be considered exposed.',
        }),
      );
    }
    return super.catch(err);
  }

  async run(): Promise<SetSecretResult> {
    const { args, flags, argv } = await this.parse(SetSecret);
    return setSecretCommand(this.io(), { args, flags, argv: argv as string[] });
  }
}
