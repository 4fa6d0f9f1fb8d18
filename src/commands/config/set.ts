import { installedNameArg, profileFlag } from '../../cli/common-flags.js';
import { defineCommand } from '../../cli/command.js';
import { Args } from '../../cli/flags.js';

export default defineCommand({
  summary: "Set an extension's non-secret config fields.",
  description: `Writes KEY=VALUE pairs (typed by the field's schema; arrays as a,b or JSON) into the extension's [[capabilities]] table in settings.toml (or the profile), keeping everything else in the file byte for byte. It neither enables nor disables: a disabled extension keeps the values for \`yep-ext enable\`. A secret field is refused without echoing it: use \`yep-ext secret set NAME FIELD\` (hidden prompt or --stdin). The host's \`yolop extensions config set\`.`,
  examples: [
    '<%= config.bin %> config set logfire endpoint=https://logfire.example',
    '<%= config.bin %> config set logfire sample_rate=0.5 tags=a,b --json',
    '<%= config.bin %> config set logfire endpoint=https://eu.logfire.example --profile work',
  ],
  strict: false,
  args: {
    name: installedNameArg,
    values: Args.string({ ignoreStdin: true, required: true, description: 'KEY=VALUE pairs (one or more).' }),
  },
  flags: { ...profileFlag },
  async run(io, { args, flags, argv }) {
    const [{ setConfig }, { renderConfigSet }] = await Promise.all([import('../../core/operations/config.js'), import('../../cli/render-config.js')]);
    const result = await setConfig(io.context(), args.name, argv.slice(1), flags.profile !== undefined ? { profile: flags.profile } : {});
    if (!io.json) io.log(renderConfigSet(result, flags.quiet === true));
    return result;
  },
});
