import { profileFlag } from '../cli/common-flags.js';
import { defineCommand } from '../cli/command.js';
import { Args } from '../cli/flags.js';

export default defineCommand({
  summary: 'Disable an extension, keeping its configuration.',
  description:
    "Marks the extension's [[capabilities]] table in settings.toml with `enabled = false` (yolop then skips it) instead of deleting it, so its inline config survives for the next `enable`. Nothing else in the file changes.",
  examples: ['<%= config.bin %> disable logfire', '<%= config.bin %> disable logfire --profile work'],
  flags: { ...profileFlag },
  args: {
    name: Args.string({
      ignoreStdin: true,
      required: true,
      description: 'Installed extension name (yolop-extension-<name> works too), or the directory a path install came from (`.` inside it).',
    }),
  },
  async run(io, parsed) {
    return (await import('../cli/disable-run.js')).disableCommand(io, parsed);
  },
});
