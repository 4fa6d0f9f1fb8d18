import { Flags } from '@oclif/core';
import { BaseCommand, indexFlag } from '../cli/base-command.js';
import { outdatedJson, renderOutdated } from '../cli/render-outdated.js';
import { stdoutShape } from '../cli/terminal.js';
import { ERROR_CODES, YepError } from '../core/errors.js';
import { anyOutdated, outdatedExtensions } from '../core/operations/outdated.js';

export default class Outdated extends BaseCommand {
  static override summary = 'Show which installed extensions have newer versions: current, wanted (within the recorded requirement or ref) and latest.';
  static override description = `Reads each crate's index once and each git ref with ls-remote (in parallel, nothing is downloaded). wanted is what \`update\` would move to; latest is the newest at all (for crates, also outside the recorded requirement: reach it with \`install\`). Path installs are listed as local. A lookup that fails is reported on its row.

Exits 0 whatever it finds; with --exit-code, exits 14 when something is outdated (so scripts choose). A failed lookup exits with its error's code (11 when others succeeded).`;

  static override examples = ['<%= config.bin %> outdated', '<%= config.bin %> outdated --json', '<%= config.bin %> outdated --exit-code'];

  static override flags = {
    ...indexFlag,
    'exit-code': Flags.boolean({ description: 'Exit 14 when any extension is outdated (wanted or latest newer than installed); 0 otherwise.' }),
  };

  async run(): Promise<unknown> {
    const { flags } = await this.parse(Outdated);
    const ctx = this.makeContext({ index: flags.index });
    const items = await outdatedExtensions(ctx);
    const json = this.jsonEnabled();
    const doc = outdatedJson(items);
    const failed = items.filter((i) => i.status === 'failed');
    const exit = failed.length > 0 ? (failed.length === items.length ? (ERROR_CODES[failed[0]!.error!.code] ?? ERROR_CODES.E_PARTIAL) : ERROR_CODES.E_PARTIAL) : flags['exit-code'] && anyOutdated(items) ? ERROR_CODES.E_OUTDATED : 0;
    if (exit === 0) {
      if (!json) this.log(await renderOutdated(items, stdoutShape()));
      return doc;
    }
    // The table (or document) is the answer either way: print it whole, then exit.
    if (json) this.logJson(doc);
    else this.log(await renderOutdated(items, stdoutShape()));
    if (failed.length > 0 && !json) {
      throw new YepError(failed.length === items.length ? failed[0]!.error!.code : 'E_PARTIAL', `Could not check ${failed.map((f) => f.name).join(', ')}: ${failed[0]!.error!.message}`, {
        ...(failed[0]!.error!.hint ? { hint: failed[0]!.error!.hint } : {}),
      });
    }
    return this.exit(exit);
  }
}
