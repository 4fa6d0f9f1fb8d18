import { installedNameArg, profileFlag } from '../cli/common-flags.js';
import { defineCommand } from '../cli/command.js';

export default defineCommand({
  summary: 'Disable an extension, keeping its configuration.',
  description:
    "Marks the extension's [[capabilities]] table in settings.toml with `enabled = false` (yolop then skips it) instead of deleting it, so its inline config survives for the next `enable`. Nothing else in the file changes.",
  examples: ['<%= config.bin %> disable logfire', '<%= config.bin %> disable logfire --profile work'],
  flags: { ...profileFlag },
  args: {
    name: installedNameArg,
  },
  async run(io, parsed) {
    return (await import('../cli/disable-run.js')).disableCommand(io, parsed);
  },
});
