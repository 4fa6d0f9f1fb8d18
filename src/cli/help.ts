/**
 * The help class (package.json oclif.helpClass): oclif's own rendering, plus an
 * ENVIRONMENT section on the root help (the directory and registry overrides
 * docs/configuration.md points to), and unknown subjects (`yep-ext help instal`,
 * `yep-ext instal --help`) reported like any unknown command instead of oclif's
 * "Command instal not found.".
 */
import { Help } from '@oclif/core';
import { failUnknownCommand } from './unknown-command.js';

const ENVIRONMENT: Array<[string, string]> = [
  ['YOLOP_CONFIG_DIR', "yolop's config root (default $XDG_CONFIG_HOME/yolop or ~/.config/yolop): settings.toml, connections.toml, the store."],
  ['YOLOP_EXTENSIONS_DIR', 'The store of installed packages and extensions.lock (default <config>/extensions).'],
  ['YEP_EXT_INDEX', 'Sparse index root to use instead of crates.io (like --index).'],
  ['NO_COLOR', 'Set to turn colours off.'],
  ['YEP_EXT_DEBUG', 'Set to print the causes of errors.'],
];

export default class YepHelp extends Help {
  protected override async showRootHelp(): Promise<void> {
    await super.showRootHelp();
    this.log(this.section('ENVIRONMENT', this.renderList(ENVIRONMENT, { indentation: 2, multiline: false, stripAnsi: this.opts.stripAnsi })));
    this.log('');
  }

  override async showHelp(argv: string[]): Promise<void> {
    try {
      await super.showHelp(argv);
    } catch (e) {
      const m = /^Command (.+) not found\.$/.exec((e as Error)?.message ?? '');
      if (!m) throw e;
      failUnknownCommand(this.config, m[1]!, process.argv.slice(2));
    }
  }
}
