import { resolve } from 'node:path';
import { defineCommand } from '../../cli/command.js';
import { Flags } from '../../cli/flags.js';

export default defineCommand({
  summary: 'Write a policy file that admits exactly the locked extensions.',
  description: `From the lock (its only mode; --from-lock says so explicitly): the source kinds, index roots, git hosts and names of extensions.lock (or --lockfile), each name pinned to its content hash; anything else is then refused with exit status 13. Written to your <config>/yep-ext-policy.toml, or --output (e.g. a file to install as /etc/yolop/yep-ext-policy.toml). With no lock at that place (nothing installed, a mistyped --lockfile) nothing is written: exit 3. See docs/policy.md.`,
  examples: ['<%= config.bin %> policy init', '<%= config.bin %> policy init --from-lock --output ./yep-ext-policy.toml'],
  flags: {
    'from-lock': Flags.boolean({ description: 'Admit exactly what the lock pins (the default, and the only mode).' }),
    lockfile: Flags.string({ description: "The lockfile to read (default: the store's own extensions.lock).", helpValue: '<path>' }),
    output: Flags.string({ description: 'Where to write the policy (default: <config>/yep-ext-policy.toml).', helpValue: '<path>' }),
    force: Flags.boolean({ description: 'Replace an existing file at the output path.' }),
  },
  async run(io, { flags }) {
    const { initPolicyFromLock } = await import('../../core/operations/policy.js');
    const result = await initPolicyFromLock(io.context(), {
      ...(flags.output !== undefined ? { output: resolve(io.io.cwd, flags.output) } : {}),
      ...(flags.lockfile !== undefined ? { lockfile: resolve(io.io.cwd, flags.lockfile) } : {}),
      force: flags.force,
    });
    if (!io.json) io.log(`Wrote ${result.path}: it admits exactly the ${result.entries} locked extension${result.entries === 1 ? '' : 's'}.`);
    return { path: result.path, entries: result.entries };
  },
});
