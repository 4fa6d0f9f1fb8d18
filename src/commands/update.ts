import { Args, Flags } from '@oclif/core';
import { BaseCommand, feedbackFlags, indexFlag, timeoutFlag, minAgeFlag } from '../cli/base-command.js';
import { runUpdate } from '../cli/update-run.js';

export default class Update extends BaseCommand {
  static override summary = 'Update extensions from their recorded sources, asking again when the grant widens.';
  static override description =
    `With no names, every installed extension is updated within its recorded requirement or ref (as \`npm update\` and \`cargo update\` do; --all says the same). A newer version outside the requirement is named with the install that takes it.

Crates move to the highest version matching the requirement you installed with whose engines.yolop admits the installed yolop (newer ones that need a newer yolop are named and skipped; --ignore-engines takes the newest anyway); git installs move the ref you asked for to its new commit; path installs are re-read and re-pinned in place.

A hash-identical update is silent. An update that only narrows what the extension may do is applied and its diff shown. An update that widens the grant (new tools, hooks, MCP servers, commands, prompt, secrets, a changed server command) shows the contribution diff and asks; without a TTY it is refused with exit status 8 and nothing changes, unless --yes, or --accept with the exact fingerprint of the new grant (what a CI pipeline approves after review).`;

  static override aliases = ['upgrade'];
  static override examples = [
    '<%= config.bin %> update',
    '<%= config.bin %> update lsp',
    '<%= config.bin %> update --dry-run',
    '<%= config.bin %> update --min-age 3d',
    '<%= config.bin %> update --json',
    '<%= config.bin %> update lsp --accept sha256:3f1c…',
  ];

  static override strict = false;
  static override args = { names: Args.string({ ignoreStdin: true, description: 'Extensions to update (none: every installed one).' }) };
  static override flags = {
    ...indexFlag,
    ...feedbackFlags,
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
    'git-mirror': Flags.string({
      description:
        'Resolve and fetch git sources from this mirror instead of their origin (the git/ root of a `yep-ext mirror` tree or any server laid out the same way; also YEP_EXT_GIT_MIRROR). The lock keeps the origin URLs. See docs/fleet.md.',
      helpValue: '<url>',
    }),
    build: Flags.boolean({
      allowNo: true,
      description:
        'Build the server binary from the crate with cargo even when a prebuilt one exists (--build, which is consent to run the build), or never build it (--no-build: package only). Default: build only when no prebuilt binary fits this host, cargo is on PATH and you consent (--allow-build, or yes at the prompt). See docs/binaries.md.',
    }),
    'allow-build': Flags.boolean({
      description:
        "Consent to building a crate's server from source with cargo when no prebuilt binary fits this host: its build scripts and compiler plugins run on this machine. --yes does not give this consent; without it (and without a terminal to ask) the package is installed without its server. The policy file can forbid builds ([binaries] build_from_source = false).",
    }),
    ...timeoutFlag,
  };

  async run(): Promise<unknown> {
    const { argv, flags } = await this.parse(Update);
    return runUpdate(this.io(), flags, argv as string[]);
  }
}
