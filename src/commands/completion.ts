import { Args } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { SHELLS, completionScript, type Shell } from '../cli/completion-scripts.js';

export default class Completion extends BaseCommand {
  static override summary = 'Print the shell completion script for bash, zsh or fish.';
  static override description =
    `Completes commands, flags, flag values and the names of installed extensions (for enable, disable, remove, update, set-secret and doctor, with secret field names for set-secret), and paths where a command takes one.

bash: add  eval "$(yep-ext completion bash)"  to ~/.bashrc
zsh:  add  eval "$(yep-ext completion zsh)"  to ~/.zshrc
fish: run  yep-ext completion fish > ~/.config/fish/completions/yep-ext.fish`;

  static override examples = [
    '<%= config.bin %> completion bash',
    '<%= config.bin %> completion zsh',
    '<%= config.bin %> completion fish > ~/.config/fish/completions/yep-ext.fish',
  ];
  static override args = { shell: Args.string({ ignoreStdin: true, required: true, options: [...SHELLS], description: 'The shell to complete for.' }) };

  async run(): Promise<{ shell: Shell; script: string }> {
    const { args } = await this.parse(Completion);
    const shell = args.shell as Shell;
    const script = completionScript(shell);
    if (!this.jsonEnabled()) process.stdout.write(script);
    return { shell, script };
  }
}
