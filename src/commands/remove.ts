import { Args } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { green } from '../cli/style.js';
import { removeExtension } from '../core/operations/remove.js';

export default class Remove extends BaseCommand {
  static override summary = 'Remove an installed extension, its lock entry, its settings and its secrets.';
  static override description = 'For an extension installed from a local path only the store link is removed; your directory is never touched.';
  static override aliases = ['uninstall', 'rm'];
  static override examples = ['<%= config.bin %> remove lsp', '<%= config.bin %> remove yolop-extension-lsp --json'];
  static override args = { name: Args.string({ ignoreStdin: true, required: true, description: 'Extension name (the crate spelling yolop-extension-<name> is accepted).' }) };

  async run(): Promise<unknown> {
    const { args } = await this.parse(Remove);
    const ctx = this.makeContext();
    const outcome = await removeExtension(ctx, args.name);
    if (!this.jsonEnabled()) this.log(`${green('✔')} Removed ${outcome.name}.`);
    return outcome;
  }
}
