import { Args, Flags } from '@oclif/core';
import { BaseCommand, feedbackFlags, indexFlag, timeoutFlag } from '../cli/base-command.js';
import { renderSearch, truncationNote } from '../cli/render-search.js';
import { stdoutShape } from '../cli/terminal.js';
import { searchExtensions } from '../core/operations/search.js';

export default class Search extends BaseCommand {
  static override summary = 'Search crates.io for yolop extensions.';
  static override description =
    'Looks for crates with the `yolop-extension` keyword or a name starting with `yolop-extension-`, through the registry web API named in the index config.json (one request per second at most). Marks the ones already installed.';

  static override examples = ['<%= config.bin %> search', '<%= config.bin %> search lsp', '<%= config.bin %> search --limit 50 --json'];

  static override args = {
    term: Args.string({ ignoreStdin: true, required: false, description: 'Words to look for in names and descriptions.' }),
  };

  static override flags = {
    ...indexFlag,
    ...feedbackFlags,
    limit: Flags.integer({ default: 20, min: 1, max: 1000, description: 'Show at most this many results.' }),
    ...timeoutFlag,
  };

  async run(): Promise<unknown> {
    const { args, flags } = await this.parse(Search);
    const ctx = this.makeContext({ index: flags.index, quiet: flags.quiet, verbose: flags.verbose, timeout: flags.timeout });
    const result = await searchExtensions(ctx, { ...(args.term ? { term: args.term } : {}), limit: flags.limit });
    if (!this.jsonEnabled()) {
      this.log(await renderSearch(result, stdoutShape()));
      // On stderr: a piped table stays rows only.
      const note = truncationNote(result, flags.limit);
      if (note) this.logToStderr(note);
    }
    return result;
  }
}
