import { defineCommand } from '../cli/command.js';
import { Args } from '../cli/flags.js';

export default defineCommand({
  summary: 'Check installed extensions are exactly what the lock pins.',
  description: `For each lock entry (or each name given): the store entry is there, its files hash to the locked content hash (the host's algorithm), a provisioned server binary matches its recorded digest, plugin.json parses, and the server command resolves to an executable. Every file is re-hashed. Without names, a package in the store that no lock entry pins (yolop loads it anyway) is a problem of kind unlocked, and a name settings.toml enables that nothing installs is one of kind not-installed. Exit 0 when all hold; exit 5 naming each problem otherwise (repair with \`yep-ext install --force <name>\` or \`yep-ext install --frozen\`). With --json the report is printed as is (on failure under error.details).

engines.yolop against the installed agent (yolop --version): an enabled extension whose range excludes the agent is a problem of kind engines (exit 4 when it is the only kind of problem, else 5); one that is not enabled is listed as a warning (exit unchanged). An unknown agent lists nothing.`,
  examples: ['<%= config.bin %> verify', '<%= config.bin %> verify lsp logfire', '<%= config.bin %> verify -q', '<%= config.bin %> verify --json'],
  flags: {},
  strict: false,
  args: { names: Args.string({ ignoreStdin: true, description: 'Extensions to verify, by name or source directory (default: every installed one).' }) },
  async run(io, parsed) {
    return (await import('../cli/verify-run.js')).verifyCommand(io, parsed);
  },
});
