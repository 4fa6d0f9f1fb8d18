import { installedNameArg } from '../cli/common-flags.js';
import { defineCommand } from '../cli/command.js';

export default defineCommand({
  summary: 'Remove an extension, its lock entry, settings and secrets.',
  description: 'For an extension installed from a local path only the store link is removed; your directory is never touched.',
  aliases: ['uninstall', 'rm', 'un'],
  examples: ['<%= config.bin %> remove lsp', '<%= config.bin %> remove yolop-extension-lsp --json'],
  args: {
    name: installedNameArg,
  },
  async run(io, parsed) {
    return (await import('../cli/remove-run.js')).removeCommand(io, parsed);
  },
});
