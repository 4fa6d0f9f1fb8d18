import { Flags } from '@oclif/core';
import { resolve } from 'node:path';
import { BaseCommand } from '../../cli/base-command.js';
import { YepError } from '../../core/errors.js';
import { initPolicyFromLock } from '../../core/operations/policy.js';

export default class PolicyInit extends BaseCommand {
  static override summary = 'Write a policy file that admits exactly the locked extensions.';
  static override description =
    `With --from-lock: the source kinds, index roots, git hosts and names of extensions.lock (or --lockfile), each name pinned to its content hash; anything else is then refused with exit status 13. Written to your <config>/yep-ext-policy.toml, or --output (e.g. a file to install as /etc/yolop/yep-ext-policy.toml). With no lock at that place (nothing installed, a mistyped --lockfile) nothing is written: exit 3. See docs/policy.md.`;
  static override examples = ['<%= config.bin %> policy init --from-lock', '<%= config.bin %> policy init --from-lock --output ./yep-ext-policy.toml'];
  static override flags = {
    'from-lock': Flags.boolean({ description: 'Admit exactly what the lock pins (the only mode for now).' }),
    lockfile: Flags.string({ description: "The lockfile to read (default: the store's own extensions.lock).", helpValue: '<path>' }),
    output: Flags.string({ description: 'Where to write the policy (default: <config>/yep-ext-policy.toml).', helpValue: '<path>' }),
    force: Flags.boolean({ description: 'Replace an existing file at the output path.' }),
  };

  async run(): Promise<unknown> {
    const { flags } = await this.parse(PolicyInit);
    if (!flags['from-lock']) throw new YepError('E_USAGE', 'policy init needs --from-lock.', { hint: 'Run `yep-ext policy init --from-lock`.' });
    const result = await initPolicyFromLock(this.makeContext(), {
      ...(flags.output !== undefined ? { output: resolve(flags.output) } : {}),
      ...(flags.lockfile !== undefined ? { lockfile: resolve(flags.lockfile) } : {}),
      force: flags.force,
    });
    if (!this.jsonEnabled()) this.log(`Wrote ${result.path}: it admits exactly the ${result.entries} locked extension${result.entries === 1 ? '' : 's'}.`);
    return { path: result.path, entries: result.entries };
  }
}
