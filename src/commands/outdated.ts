import { indexFlag, minAgeFlag, timeoutFlag } from '../cli/common-flags.js';
import { defineCommand } from '../cli/command.js';
import { Args, Flags } from '../cli/flags.js';

export default defineCommand({
  summary: 'Show newer versions, and the command that moves each one.',
  description: `Reads each crate's index once and each git ref with ls-remote (in parallel), and decides as \`update\` does (the same rules, the same release-age cooldown: --min-age, YEP_EXT_MIN_AGE, the policy's min_age). wanted is what \`update\` moves to (its row says \`yep-ext update <name>\`); latest is the newest at all, for crates also a release outside the recorded requirement, which only an install reaches (its row says \`yep-ext install <name>@^<line>\`). A git ref that is a tag is shown as the tag. Path installs are listed as local. A lookup that fails is reported on its row.

Newer, but needs a newer yolop: a version's engines.yolop is in its manifest, so for a crate with newer versions the newest are downloaded (at most 5 per extension and 20 per run, each verified against the registry checksum as install does, kept in the shared download cache; nothing is installed) until one the installed agent can run is found. What was fetched is said on stderr; the ranges read are remembered by the registry checksum, so the next run fetches nothing for those versions (--verbose says so). The row then names the newest version yolop can run and the newer ones it cannot ("0.5.0 needs yolop >=0.13; you have 0.12.1"); when none can, its status is held. With no agent found (yolop on PATH or YOLOP_BIN), nothing is downloaded and the row says the agent's version is unknown. --json: newer_engines (docs/info-outdated.md).

A row whose installed tree does not match its lock entry (gone from the store, edited files, a drifted binary, a broken manifest) is damaged, with the install --force that repairs it, whatever the origin offers.

Exits 0 whatever it finds; with --exit-code, exits 14 when something is outdated (update or beyond; held is not: an update yolop cannot run is not one to take), 5 when a row is damaged. A failed lookup exits with its error's code (11 when others succeeded).`,
  examples: [
    '<%= config.bin %> outdated',
    '<%= config.bin %> outdated lsp',
    '<%= config.bin %> outdated --json',
    '<%= config.bin %> outdated --exit-code',
    '<%= config.bin %> outdated --verbose',
    '<%= config.bin %> outdated --min-age 3d',
  ],
  strict: false,
  args: { names: Args.string({ ignoreStdin: true, description: 'Extensions to check, by name or source directory (default: every installed one).' }) },
  flags: {
    ...indexFlag,
    ...minAgeFlag,
    'exit-code': Flags.boolean({
      description:
        'Exit 14 when any extension is outdated (wanted or latest newer than installed); 0 otherwise. Held rows (every newer version tried needs a newer yolop) do not count; a damaged row (the installed tree is not what the lock pins) exits 5.',
    }),
    ...timeoutFlag,
  },
  async run(io, parsed) {
    return (await import('../cli/outdated-run.js')).outdatedCommand(io, parsed);
  },
});
