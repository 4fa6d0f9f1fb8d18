import { resolve } from 'node:path';
import { defineCommand } from '../../cli/command.js';
import { Args } from '../../cli/flags.js';

export default defineCommand({
  summary: 'Write extensions.lock to a path, to commit with a project.',
  description: 'Provision another machine from it with `yep-ext install --frozen --lockfile <path>`.',
  examples: ['<%= config.bin %> lock export ./yolop-extensions.lock'],
  args: {
    path: Args.string({
      ignoreStdin: true,
      required: true,
      description: 'Where to write the lock (its directory must exist: yep-ext makes the file, never the directories above it).',
    }),
  },
  async run(io, { args }) {
    const { exportLock } = await import('../../core/operations/frozen.js');
    const result = await exportLock(io.context(), resolve(io.io.cwd, args.path));
    if (!io.json) io.log(`Wrote ${result.entries} entr${result.entries === 1 ? 'y' : 'ies'} to ${result.path}.`);
    return result;
  },
});
