import { defineCommand } from '../cli/command.js';
import { Args } from '../cli/flags.js';

export default defineCommand({
  summary: 'Remove an extension, its lock entry, settings and secrets.',
  description: 'For an extension installed from a local path only the store link is removed; your directory is never touched.',
  aliases: ['uninstall', 'rm', 'un'],
  examples: ['<%= config.bin %> remove lsp', '<%= config.bin %> remove yolop-extension-lsp --json'],
  args: {
    name: Args.string({
      ignoreStdin: true,
      required: true,
      description: 'Installed extension name (yolop-extension-<name> works too), or the directory a path install came from (`.` inside it).',
    }),
  },
  async run(io, parsed) {
    return (await import('../cli/remove-run.js')).removeCommand(io, parsed);
  },
});
