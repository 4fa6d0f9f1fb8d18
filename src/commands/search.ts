import { indexFlag, timeoutFlag } from '../cli/common-flags.js';
import { defineCommand } from '../cli/command.js';
import { Args, Flags } from '../cli/flags.js';

export default defineCommand({
  summary: 'Search crates.io for yolop extensions.',
  description:
    'Looks for crates with the `yolop-extension` keyword or a name starting with `yolop-extension-`, through the registry web API named in the index config.json (one request per second at most). Marks the ones already installed.',
  examples: ['<%= config.bin %> search', '<%= config.bin %> search lsp', '<%= config.bin %> search --limit 50 --json'],
  args: {
    term: Args.string({ ignoreStdin: true, required: false, description: 'Words to look for in names and descriptions.' }),
  },
  flags: {
    ...indexFlag,
    limit: Flags.integer({ default: 20, min: 1, max: 1000, description: 'Show at most this many results.' }),
    ...timeoutFlag,
  },
  async run(io, { args, flags }) {
    const [{ searchExtensions }, { renderSearch, truncationNote }, { stdoutShape }] = await Promise.all([
      import('../core/operations/search.js'),
      import('../cli/render-search.js'),
      import('../cli/terminal.js'),
    ]);
    const result = await searchExtensions(io.context(), { ...(args.term ? { term: args.term } : {}), limit: flags.limit });
    if (!io.json) {
      io.log(await renderSearch(result, stdoutShape(io.io)));
      // On stderr: a piped table stays rows only.
      const note = truncationNote(result, flags.limit);
      if (note) io.logToStderr(note);
    }
    return result;
  },
});
