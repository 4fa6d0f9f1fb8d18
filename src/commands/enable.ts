import { installedNameArg, profileFlag } from '../cli/common-flags.js';
import { defineCommand } from '../cli/command.js';
import { Flags } from '../cli/flags.js';

export default defineCommand({
  summary: 'Enable an extension, asking for config it still lacks.',
  description: `Adds (or switches back on) the extension's [[capabilities]] table in settings.toml, keeping everything else in the file byte for byte.
On a terminal, each required field that is unset is asked for: secrets with hidden input (stored in connections.toml), choices with a selector, other values as text typed by the field's schema.
Without a terminal nothing is asked: pass non-secret values with --config and secrets with \`yep-ext set-secret\`. If required fields are still unset the extension is enabled anyway, the values given are saved, and the command exits 10 (setup_incomplete) listing the commands that finish the setup.
An extension whose engines.yolop excludes the installed yolop (\`yolop --version\`) is not enabled: exit 4, settings.toml untouched, unless --ignore-engines.`,
  examples: [
    '<%= config.bin %> enable logfire',
    '<%= config.bin %> enable logfire --config endpoint=https://logfire.example --config sample_rate=0.5',
    '<%= config.bin %> enable yolop-extension-logfire --json',
    '<%= config.bin %> enable logfire --profile work',
  ],
  args: {
    name: installedNameArg,
  },
  flags: {
    ...profileFlag,
    config: Flags.string({
      char: 'c',
      multiple: true,
      multipleNonGreedy: true,
      description: 'Set a non-secret config field, typed by its schema (key=value; repeatable). Arrays: a,b or JSON.',
    }),
    'ignore-engines': Flags.boolean({
      description: 'Enable it even when its engines.yolop excludes the installed yolop (by default that is refused with exit 4: yolop could not run it).',
    }),
  },
  async run(io, parsed) {
    return (await import('../cli/enable-run.js')).enableCommand(io, parsed);
  },
});
