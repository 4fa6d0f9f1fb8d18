import { installedNameArg, profileFlag } from '../../cli/common-flags.js';
import { defineCommand } from '../../cli/command.js';

export default defineCommand({
  summary: "Show an extension's config as yolop would give it to the server.",
  description: `Each field the extension declares: its value in effect (settings.toml, or the profile over it; else the manifest's default), whether it is required, and the variable yolop passes it as. A secret is only ever "set" or "unset": its value is never shown. The host's \`yolop extensions config show\`.`,
  examples: ['<%= config.bin %> config show logfire', '<%= config.bin %> config show logfire --json', '<%= config.bin %> config show logfire --profile work'],
  args: {
    name: installedNameArg,
  },
  flags: { ...profileFlag },
  async run(io, { args, flags }) {
    const [{ showConfig }, { renderConfigShow }] = await Promise.all([import('../../core/operations/config.js'), import('../../cli/render-config.js')]);
    const result = await showConfig(io.context(), args.name, flags.profile !== undefined ? { profile: flags.profile } : {});
    if (!io.json) io.log(renderConfigShow(result));
    return result;
  },
});
