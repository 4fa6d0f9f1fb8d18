import { Args, loadHelpClass } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';

export default class HelpCommand extends BaseCommand {
  static override summary = 'Show help for yep-ext or one of its commands.';
  static override description = 'The same text as `yep-ext <command> --help`.';
  static override examples = ['<%= config.bin %> help', '<%= config.bin %> help install', '<%= config.bin %> help lock export'];
  // --json is accepted so that its errors (an unknown command) come as JSON; help itself is text.
  static override strict = false;
  static override args = { command: Args.string({ ignoreStdin: true, description: 'The command to explain (several words for a topic: lock export).' }) };

  async run(): Promise<void> {
    const { argv } = await this.parse(HelpCommand);
    const Help = await loadHelpClass(this.config);
    await new Help(this.config, this.config.pjson.oclif.helpOptions ?? {}).showHelp(argv as string[]);
  }
}
