import { indexFlag, minAgeFlag, profileFlag, timeoutFlag } from '../cli/common-flags.js';
import { defineCommand } from '../cli/command.js';
import { Args } from '../cli/flags.js';

export default defineCommand({
  summary: 'Show one extension: source, pin, grant, config, checks, updates.',
  aliases: ['view', 'show'],
  description: `For an installed extension (by name, or for a path install by its directory: \`info .\` inside it): its source and pinned version or commit, content hash, the full contribution summary and grant fingerprint, each config field as set/unset/default (secrets only as set or unset, never a value), the checks \`list\` runs, its engines.yolop verdict, and what its origin offers now, as \`update\` and \`outdated\` read it (crates: the newest versions inside and outside the recorded requirement, from one index read, under the same release-age cooldown; git: the ref's current commit, shown as its tag when the ref is one). A failed registry or git lookup is reported, not fatal.

For a crate that is not installed (\`info crates.io:<crate>\`, or a bare name): what the registry lists (latest and versions), without installing anything. A git URL or a directory that is not installed: use \`install <spec> --dry-run\`.`,
  examples: ['<%= config.bin %> info lsp', '<%= config.bin %> info lsp --json', '<%= config.bin %> info crates.io:yolop-extension-logfire'],
  args: {
    target: Args.string({
      ignoreStdin: true,
      required: true,
      description:
        'Installed extension name or the directory a path install came from (`.` inside it), or a crate spec (crates.io:<crate>) to look up in the registry.',
    }),
  },
  flags: { ...indexFlag, ...minAgeFlag, ...profileFlag, ...timeoutFlag },
  async run(io, { args, flags }) {
    const [{ extensionInfo }, { infoJson, renderInfo }] = await Promise.all([import('../core/operations/info.js'), import('../cli/render-info.js')]);
    const info = await extensionInfo(io.context(), args.target, io.io.cwd, flags.profile !== undefined ? { profile: flags.profile } : {});
    if (!io.json) io.log(renderInfo(info));
    return infoJson(info);
  },
});
