import { Args } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { green } from '../cli/style.js';
import { describeLeftovers, removeExtension, type RemoveOutcome } from '../core/operations/remove.js';

/** "Removed lsp." or, for a name that was not installed, what was left of it. */
function removedLine(o: RemoveOutcome): string {
  if (o.removed.store || o.removed.lock) return `Removed ${o.name}.`;
  return `Removed the ${describeLeftovers(o.removed)} ${o.name} left behind (it was not installed).`;
}

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
    if (!this.jsonEnabled()) this.log(`${green('✔')} ${removedLine(outcome)}`);
    return outcome;
  }
}
