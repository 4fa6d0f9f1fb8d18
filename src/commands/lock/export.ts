import { Args } from '@oclif/core';
import { resolve } from 'node:path';
import { BaseCommand } from '../../cli/base-command.js';
import { exportLock } from '../../core/operations/frozen.js';

export default class LockExport extends BaseCommand {
  static override summary = 'Write the current extensions.lock to a path, for committing to a project repository.';
  static override description = 'Provision another machine from it with `yep-ext install --frozen --lockfile <path>`.';
  static override examples = ['<%= config.bin %> lock export ./yolop-extensions.lock'];
  static override args = {
    path: Args.string({
      ignoreStdin: true,
      required: true,
      description: 'Where to write the lock (its directory must exist: yep-ext makes the file, never the directories above it).',
    }),
  };

  async run(): Promise<unknown> {
    const { args } = await this.parse(LockExport);
    const ctx = this.makeContext();
    const result = await exportLock(ctx, resolve(args.path));
    if (!this.jsonEnabled()) this.log(`Wrote ${result.entries} entr${result.entries === 1 ? 'y' : 'ies'} to ${result.path}.`);
    return result;
  }
}
