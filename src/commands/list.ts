import { Flags } from '@oclif/core';
import { BaseCommand, feedbackFlags, profileFlag } from '../cli/base-command.js';
import { listJson, renderList } from '../cli/list-view.js';
import { stdoutShape } from '../cli/terminal.js';
import { listExtensions } from '../core/operations/list.js';

// `list` also has an oclif-free fast path (src/cli/fast-path.ts) for its common
// argument shapes: keep its flags and output in step with this class (the
// differential test in test/cli/fast-path.test.ts fails when they drift).
export default class List extends BaseCommand {
  static override summary = 'List installed extensions with their version, state, source and problems.';
  static override aliases = ['ls'];
  static override examples = ['<%= config.bin %> list', '<%= config.bin %> list --json', '<%= config.bin %> list --no-verify'];
  static override flags = {
    ...feedbackFlags,
    ...profileFlag,
    verify: Flags.boolean({ default: true, allowNo: true, description: 'Re-hash crate and git packages to detect files changed since install.' }),
  };

  async run(): Promise<unknown> {
    const { flags } = await this.parse(List);
    const ctx = this.makeContext({ quiet: flags.quiet, verbose: flags.verbose });
    const items = await listExtensions(ctx, { verify: flags.verify, ...(flags.profile !== undefined ? { profile: flags.profile } : {}) });
    if (!this.jsonEnabled()) this.log(await renderList(items, stdoutShape()));
    return listJson(items);
  }
}
