import { Flags } from '@oclif/core';
import { BaseCommand, feedbackFlags, indexFlag, minAgeFlag, timeoutFlag } from '../cli/base-command.js';
import { checkMinAge } from '../cli/min-age.js';
import { outdatedJson, renderOutdated } from '../cli/render-outdated.js';
import { stdoutShape } from '../cli/terminal.js';
import { ERROR_CODES, YepError } from '../core/errors.js';
import { anyOutdated, outdatedReport } from '../core/operations/outdated.js';

export default class Outdated extends BaseCommand {
  static override summary = 'Show which installed extensions have newer versions, and the command that moves each one.';
  static override description =
    `Reads each crate's index once and each git ref with ls-remote (in parallel), and decides as \`update\` does (the same rules, the same release-age cooldown: --min-age, YEP_EXT_MIN_AGE, the policy's min_age). wanted is what \`update\` moves to (its row says \`yep-ext update <name>\`); latest is the newest at all, for crates also a release outside the recorded requirement, which only an install reaches (its row says \`yep-ext install <name>@^<line>\`). A git ref that is a tag is shown as the tag. Path installs are listed as local. A lookup that fails is reported on its row.

Newer, but needs a newer yolop: a version's engines.yolop is in its manifest, so for a crate with newer versions the newest are downloaded (at most 5 per extension and 20 per run, each verified against the registry checksum as install does, kept in the shared download cache; nothing is installed) until one the installed agent can run is found. What was fetched is said on stderr; the ranges read are remembered by the registry checksum, so the next run fetches nothing for those versions (--verbose says so). The row then names the newest version yolop can run and the newer ones it cannot ("0.5.0 needs yolop >=0.13; you have 0.12.1"); when none can, its status is held. With no agent found (yolop on PATH or YOLOP_BIN), nothing is downloaded and the row says the agent's version is unknown. --json: newer_engines (docs/info-outdated.md).

A row whose installed tree does not match its lock entry (gone from the store, edited files, a drifted binary, a broken manifest) is damaged, with the install --force that repairs it, whatever the origin offers.

Exits 0 whatever it finds; with --exit-code, exits 14 when something is outdated (update or beyond; held is not: an update yolop cannot run is not one to take), 5 when a row is damaged. A failed lookup exits with its error's code (11 when others succeeded).`;

  static override examples = [
    '<%= config.bin %> outdated',
    '<%= config.bin %> outdated --json',
    '<%= config.bin %> outdated --exit-code',
    '<%= config.bin %> outdated --verbose',
    '<%= config.bin %> outdated --min-age 3d',
  ];

  static override flags = {
    ...indexFlag,
    ...feedbackFlags,
    ...minAgeFlag,
    'exit-code': Flags.boolean({
      description:
        'Exit 14 when any extension is outdated (wanted or latest newer than installed); 0 otherwise. Held rows (every newer version tried needs a newer yolop) do not count; a damaged row (the installed tree is not what the lock pins) exits 5.',
    }),
    ...timeoutFlag,
  };

  async run(): Promise<unknown> {
    const { flags } = await this.parse(Outdated);
    checkMinAge(flags['min-age']);
    const ctx = this.makeContext({
      index: flags.index,
      quiet: flags.quiet,
      verbose: flags.verbose,
      timeout: flags.timeout,
      ...(flags['min-age'] !== undefined ? { cooldown: { minAge: flags['min-age'] } } : {}),
    });
    const { items, unlocked } = await outdatedReport(ctx);
    const json = this.jsonEnabled();
    const doc = outdatedJson(items, unlocked);
    // The host loads them too, and no lock entry says where they came from: nothing to compare, but not "nothing installed".
    if (unlocked.length > 0)
      ctx.log.warn(
        `The store holds ${unlocked.length === 1 ? 'a package' : 'packages'} no lock entry pins (${unlocked.join(', ')}): yolop loads ${unlocked.length === 1 ? 'it' : 'them'}, but with no recorded source ${unlocked.length === 1 ? 'it has' : 'they have'} nothing to compare; \`yep-ext verify\` names ${unlocked.length === 1 ? 'it' : 'them'}.`,
      );
    const failed = items.filter((i) => i.status === 'failed');
    const damaged = items.filter((i) => i.status === 'damaged');
    // Said whatever the exit: the row's current is the lock's pin, not what the host loads.
    for (const d of damaged) ctx.log.warn(`${d.name}: ${d.error!.message}; repair it with \`${d.hint}\`.`);
    const exit =
      failed.length > 0
        ? failed.length === items.length
          ? (ERROR_CODES[failed[0]!.error!.code] ?? ERROR_CODES.E_PARTIAL)
          : ERROR_CODES.E_PARTIAL
        : flags['exit-code'] && damaged.length > 0
          ? ERROR_CODES.E_INTEGRITY
          : flags['exit-code'] && anyOutdated(items)
            ? ERROR_CODES.E_OUTDATED
            : 0;
    if (exit === 0) {
      if (!json) this.log(await renderOutdated(items, stdoutShape(), unlocked));
      return doc;
    }
    // The table (or document) is the answer either way: print it whole, then exit.
    if (json) this.logJson(doc);
    else this.log(await renderOutdated(items, stdoutShape(), unlocked));
    if (failed.length > 0 && !json) {
      throw new YepError(
        failed.length === items.length ? failed[0]!.error!.code : 'E_PARTIAL',
        `Could not check ${failed.map((f) => f.name).join(', ')}: ${failed[0]!.error!.message}`,
        {
          ...(failed[0]!.error!.hint ? { hint: failed[0]!.error!.hint } : {}),
        },
      );
    }
    return this.exit(exit);
  }
}
