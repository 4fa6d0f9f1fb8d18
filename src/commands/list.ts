import { profileFlag } from '../cli/common-flags.js';
import { defineCommand } from '../cli/command.js';
import { Flags } from '../cli/flags.js';

export default defineCommand({
  summary: 'List installed extensions: version, state, source, problems.',
  // `reload` is the host's verb (`yolop extensions reload`): yep-ext has no running session to
  // restart, so an agent that runs it is shown what yolop loads on its next start or reload.
  aliases: ['ls', 'reload'],
  examples: ['<%= config.bin %> list', '<%= config.bin %> list --json', '<%= config.bin %> list --no-verify'],
  flags: {
    ...profileFlag,
    verify: Flags.boolean({ default: true, allowNo: true, description: 'Re-hash crate and git packages to detect files changed since install.' }),
  },
  async run(io, { flags }) {
    const [{ listExtensions }, { listJson, renderList }, { stdoutShape }] = await Promise.all([
      import('../core/operations/list.js'),
      import('../cli/list-view.js'),
      import('../cli/terminal.js'),
    ]);
    const items = await listExtensions(io.context(), { verify: flags.verify, ...(flags.profile !== undefined ? { profile: flags.profile } : {}) });
    if (!io.json) io.log(await renderList(items, stdoutShape(io.io)));
    return listJson(items);
  },
});
