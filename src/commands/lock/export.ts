import { resolve } from 'node:path';
import { defineCommand } from '../../cli/command.js';
import { Args, Flags } from '../../cli/flags.js';

export default defineCommand({
  summary: 'Write extensions.lock to a path, to commit with a project.',
  description:
    "Provision another machine from it with `yep-ext install --frozen --lockfile <path>`. An earlier export is replaced; a lock yep-ext did not write (yolop's, or one written by hand) only with --force, and a file that is no lock never. `-` prints the lock on stdout.",
  examples: ['<%= config.bin %> lock export ./yolop-extensions.lock', '<%= config.bin %> lock export - > yolop-extensions.lock'],
  args: {
    path: Args.string({
      ignoreStdin: true,
      required: true,
      description: 'Where to write the lock (its directory must exist: yep-ext makes the file, never the directories above it); `-` for stdout.',
    }),
  },
  flags: {
    force: Flags.boolean({ description: 'Replace a lock at the path that yep-ext did not write.' }),
  },
  async run(io, { args, flags }) {
    const { exportLock, exportLockText } = await import('../../core/operations/frozen.js');
    if (args.path === '-') {
      const { YepError } = await import('../../core/errors.js');
      if (io.json)
        throw new YepError('E_USAGE', '`lock export -` prints the lock itself on stdout; it cannot be combined with --json.', {
          hint: 'Drop --json to print the lock, or give a path (`yep-ext lock export ./yolop-extensions.lock --json`) for the JSON summary.',
        });
      const result = await exportLockText(io.context());
      io.io.stdout.write(result.text);
      return { path: '-', entries: result.entries, local: result.local };
    }
    const result = await exportLock(io.context(), resolve(io.io.cwd, args.path), flags.force ? { force: true } : {});
    if (!io.json) io.log(`Wrote ${result.entries} entr${result.entries === 1 ? 'y' : 'ies'} to ${result.path}.`);
    return result;
  },
});
