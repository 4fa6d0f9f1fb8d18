import { defineCommand } from '../cli/command.js';
import { Args } from '../cli/flags.js';
import { SHELLS, type Shell } from '../cli/completion-scripts.js';

export default defineCommand({
  summary: 'Print the shell completion script for bash, zsh or fish.',
  description: `Completes commands, flags, flag values and the names of installed extensions (for enable, disable, remove, update, set-secret and doctor, with secret field names for set-secret), and paths where a command takes one.

bash: add  eval "$(yep-ext completion bash)"  to ~/.bashrc
zsh:  add  eval "$(yep-ext completion zsh)"  to ~/.zshrc
fish: run  yep-ext completion fish > ~/.config/fish/completions/yep-ext.fish`,
  examples: [
    '<%= config.bin %> completion bash',
    '<%= config.bin %> completion zsh',
    '<%= config.bin %> completion fish > ~/.config/fish/completions/yep-ext.fish',
  ],
  args: { shell: Args.string({ ignoreStdin: true, required: true, options: [...SHELLS], description: 'The shell to complete for.' }) },
  async run(io, { args }) {
    const { completionScript } = await import('../cli/completion-scripts.js');
    const shell = args.shell as Shell;
    const script = completionScript(shell);
    if (!io.json) io.io.stdout.write(script);
    return { shell, script };
  },
});
