/**
 * The help class (package.json oclif.helpClass): oclif's own rendering, plus an
 * ENVIRONMENT section on the root help (the variables docs/configuration.md
 * lists), and unknown subjects (`yep-ext help instal`, `yep-ext instal --help`) reported like any unknown command instead of oclif's
 * "Command instal not found.".
 */
import { Help, type Command } from '@oclif/core';
import { failUnknownCommand } from './unknown-command.js';

/** The root help's ENVIRONMENT section: every variable of docs/configuration.md's table (test/unit/env-doc.test.ts). */
export const ENVIRONMENT: Array<[string, string]> = [
  ['YOLOP_CONFIG_DIR', "yolop's config root (default $XDG_CONFIG_HOME/yolop or ~/.config/yolop): settings.toml, connections.toml, the store."],
  ['YOLOP_EXTENSIONS_DIR', 'The store of installed packages and extensions.lock (default <config>/extensions).'],
  ['YEP_EXT_INDEX', 'Sparse index root to use instead of crates.io (like --index).'],
  [
    'YEP_EXT_GIT_MIRROR',
    'Fetch git sources and resolve their refs from this mirror instead of the origin (install, update, --frozen; like install --git-mirror).',
  ],
  ['YEP_EXT_CACHE_DIR', 'The shared download cache directory (off: no cache).'],
  ['YEP_EXT_MIN_AGE', 'Skip versions published less than this long ago (90m, 36h, 3d, 1w; like --min-age).'],
  ['YEP_EXT_POLICY', 'The system policy file (default /etc/yolop/yep-ext-policy.toml).'],
  ['YEP_EXT_SECRET_STORE', 'Where new secrets go: file (connections.toml, the default) or keychain.'],
  ['YEP_EXT_KEYCHAIN_TIMEOUT_MS', 'Give up on an OS keychain call after this long (default 5000).'],
  ['YEP_EXT_HTTP_TIMEOUT_MS', 'Deadline of one attempt at an index file or API page (default 60000).'],
  ['YEP_EXT_HTTP_DOWNLOAD_TIMEOUT_MS', 'Deadline of one attempt at a download (default 900000).'],
  ['YEP_EXT_HTTP_STALL_MS', 'Longest silence from a server (default 30000).'],
  ['YEP_EXT_HTTP_MIN_RATE', 'Slowest transfer accepted, bytes/s (default 1024; 0: no floor).'],
  ['YEP_EXT_HTTP_RETRIES', 'Retries after a failed request (default 3).'],
  ['YEP_EXT_MAX_CRATE_BYTES', 'Largest .crate accepted (default 512 MiB).'],
  ['YEP_EXT_MAX_BINARY_BYTES', 'Largest prebuilt binary accepted (default 512 MiB).'],
  ['YEP_EXT_BUILD_TIMEOUT_MS', 'Kill a cargo build from source after this long (default 1200000).'],
  ['YEP_EXT_AGENT_TIMEOUT_MS', 'Give up on `yolop --version` after this long (default 3000).'],
  ['YEP_EXT_LOCK_WAIT_MS', 'Wait this long for another yep-ext holding the store lock (default 300000).'],
  ['YEP_EXT_NO_FAST_PATH', 'Set to run every command through the full command framework (none of the lighter paths).'],
  ['NO_COLOR', 'Set to turn colours off (so does FORCE_COLOR=0).'],
  ['YEP_EXT_DEBUG', 'Set to print the causes of errors.'],
];

export default class YepHelp extends Help {
  protected override async showRootHelp(): Promise<void> {
    await super.showRootHelp();
    this.log(this.section('ENVIRONMENT', this.renderList(ENVIRONMENT, { indentation: 2, multiline: false, stripAnsi: this.opts.stripAnsi })));
    this.log('');
  }

  /**
   * oclif renders a flag that depends on one already shown in an exclusive group
   * (install's --enable and --lockfile need --frozen, itself in [--force | --frozen |
   * --dry-run]) as "[--enable ]": the dependency's text is gone, its space is not.
   */
  protected override formatCommand(command: Command.Loadable): string {
    const text = super.formatCommand(command);
    // The header may be bold on a terminal (USAGE between escape sequences).
    const usage = /(USAGE(?:\u001b\[[0-9;]*m)?\n)([\s\S]*?)(\n\n|$)/.exec(text);
    if (!usage) return text;
    const fixed = usage[2]!.replace(/ +\]/g, ']');
    return text.slice(0, usage.index) + usage[1] + fixed + usage[3] + text.slice(usage.index + usage[0].length);
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
