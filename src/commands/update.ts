import { allowBuildFlag, buildFlag, gitMirrorFlag, indexFlag, minAgeFlag, timeoutFlag } from '../cli/common-flags.js';
import { defineCommand } from '../cli/command.js';
import { Args, Flags } from '../cli/flags.js';

export default defineCommand({
  summary: 'Update extensions; asks again when the grant widens.',
  description: `With no names, every installed extension is updated within its recorded requirement or ref (as \`npm update\` and \`cargo update\` do; --all says the same). A newer version outside the requirement is named with the install that takes it.

Crates move to the highest version matching the requirement you installed with whose engines.yolop admits the installed yolop (newer ones that need a newer yolop are named and skipped; --ignore-engines takes the newest anyway); git installs move the ref you asked for to its new commit; path installs are re-read and re-pinned in place.

A hash-identical update is silent. An update that only narrows what the extension may do is applied and its diff shown. An update that widens the grant (new tools, hooks, MCP servers, commands, prompt, secrets, a changed server command) shows the contribution diff and asks; without a TTY it is refused with exit status 8 and nothing changes, unless --yes, or --accept with the exact fingerprint of the new grant (what a CI pipeline approves after review).`,
  aliases: ['upgrade', 'up'],
  examples: [
    '<%= config.bin %> update',
    '<%= config.bin %> update lsp',
    '<%= config.bin %> update --dry-run',
    '<%= config.bin %> update --min-age 3d',
    '<%= config.bin %> update --json',
    '<%= config.bin %> update lsp --accept sha256:3f1c…',
  ],
  strict: false,
  args: { names: Args.string({ ignoreStdin: true, description: 'Extensions to update, by name or source directory (none: every installed one).' }) },
  flags: {
    ...indexFlag,
    ...minAgeFlag,
    all: Flags.boolean({ description: 'Update every installed extension (the same as naming none).' }),
    'dry-run': Flags.boolean({ description: 'Print the plan (from -> to, the diff, whether consent is needed) without writing.' }),
    yes: Flags.boolean({ char: 'y', description: 'Accept widened grants without asking.' }),
    accept: Flags.string({
      multiple: true,
      multipleNonGreedy: true,
      description: 'Accept exactly this new grant fingerprint (repeatable); any other widening is refused.',
    }),
    'ignore-engines': Flags.boolean({
      description:
        'Move to the newest version even when its engines.yolop excludes the installed yolop (by default update moves to the newest your yolop can run).',
    }),
    ...gitMirrorFlag,
    ...buildFlag,
    ...allowBuildFlag,
    ...timeoutFlag,
  },
  async run(io, { flags, argv }) {
    return (await import('../cli/update-run.js')).runUpdate(io, flags, argv);
  },
});
