import { Args } from '@oclif/core';
import { BaseCommand, indexFlag, minAgeFlag, profileFlag, timeoutFlag } from '../cli/base-command.js';
import { checkMinAge } from '../cli/min-age.js';
import { infoJson, renderInfo } from '../cli/render-info.js';
import { extensionInfo } from '../core/operations/info.js';

export default class Info extends BaseCommand {
  static override summary = 'Show everything about one extension: source, pin, content hash, contributions, config, checks, engines and newer versions.';
  static override description =
    `For an installed extension (by name, or for a path install by its directory: \`info .\` inside it): its source and pinned version or commit, content hash, the full contribution summary and grant fingerprint, each config field as set/unset/default (secrets only as set or unset, never a value), the checks \`list\` runs, its engines.yolop verdict, and what its origin offers now, as \`update\` and \`outdated\` read it (crates: the newest versions inside and outside the recorded requirement, from one index read, under the same release-age cooldown; git: the ref's current commit, shown as its tag when the ref is one). A failed registry or git lookup is reported, not fatal.

For a crate that is not installed (\`info crates.io:<crate>\`, or a bare name): what the registry lists (latest and versions), without installing anything. A git URL or a directory that is not installed: use \`install <spec> --dry-run\`.`;

  static override examples = ['<%= config.bin %> info lsp', '<%= config.bin %> info lsp --json', '<%= config.bin %> info crates.io:yolop-extension-logfire'];

  static override args = {
    target: Args.string({
      ignoreStdin: true,
      required: true,
      description: 'Installed extension name, or a crate spec (crates.io:<crate>) to look up in the registry.',
    }),
  };

  static override flags = { ...indexFlag, ...minAgeFlag, ...profileFlag, ...timeoutFlag };

  async run(): Promise<unknown> {
    const { args, flags } = await this.parse(Info);
    checkMinAge(flags['min-age']);
    const ctx = this.makeContext({
      index: flags.index,
      timeout: flags.timeout,
      ...(flags['min-age'] !== undefined ? { cooldown: { minAge: flags['min-age'] } } : {}),
    });
    const info = await extensionInfo(ctx, args.target, process.cwd(), flags.profile !== undefined ? { profile: flags.profile } : {});
    if (!this.jsonEnabled()) this.log(renderInfo(info));
    return infoJson(info);
  }
}
