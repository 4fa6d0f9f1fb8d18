import { Args } from '@oclif/core';
import { BaseCommand, profileFlag } from '../cli/base-command.js';
import { disableCommand } from '../cli/disable-run.js';
import type { DisableResult } from '../core/operations/disable.js';

export default class Disable extends BaseCommand {
  static override summary = 'Disable an extension, keeping its configuration.';

  static override description =
    "Marks the extension's [[capabilities]] table in settings.toml with `enabled = false` (yolop then skips it) instead of deleting it, so its inline config survives for the next `enable`. Nothing else in the file changes.";

  static override examples = ['<%= config.bin %> disable logfire', '<%= config.bin %> disable logfire --profile work'];

  static override flags = { ...profileFlag };

  static override args = {
    name: Args.string({ ignoreStdin: true, required: true, description: 'Extension name (the crate spelling yolop-extension-<name> works too).' }),
  };

  async run(): Promise<DisableResult> {
    const { args, flags, argv } = await this.parse(Disable);
    return disableCommand(this.io(), { args, flags, argv: argv as string[] });
  }
}
