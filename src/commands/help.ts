import { ExitStatus, defineCommand } from '../cli/command.js';
import { Args } from '../cli/flags.js';

export default defineCommand({
  summary: 'Show help for yep-ext or one of its commands.',
  description: 'The same text as `yep-ext <command> --help`.',
  examples: ['<%= config.bin %> help', '<%= config.bin %> help install', '<%= config.bin %> help lock export'],
  // --json is accepted so that its errors (an unknown command) come as JSON; help itself is text.
  strict: false,
  args: { command: Args.string({ ignoreStdin: true, description: 'The command to explain (several words for a topic: lock export).' }) },
  async run(io, { argv }) {
    const code = await (await import('../cli/help.js')).showHelp(io.io, argv, io.json);
    if (code !== 0) throw new ExitStatus(code);
  },
});
