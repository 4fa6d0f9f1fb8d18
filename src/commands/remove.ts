import { Args } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { removeCommand } from '../cli/remove-run.js';

export default class Remove extends BaseCommand {
  static override summary = 'Remove an installed extension, its lock entry, its settings and its secrets.';
  static override description = 'For an extension installed from a local path only the store link is removed; your directory is never touched.';
  static override aliases = ['uninstall', 'rm'];
  static override examples = ['<%= config.bin %> remove lsp', '<%= config.bin %> remove yolop-extension-lsp --json'];
  static override args = {
    name: Args.string({ ignoreStdin: true, required: true, description: 'Extension name (the crate spelling yolop-extension-<name> is accepted).' }),
  };

  async run(): Promise<unknown> {
    const { args, flags, argv } = await this.parse(Remove);
    return removeCommand(this.io(), { args, flags, argv: argv as string[] });
  }
}
