import { allowBuildFlag, allowFreshFlag, buildFlag, gitMirrorFlag, indexFlag, minAgeFlag, timeoutFlag } from '../cli/common-flags.js';
import { defineCommand } from '../cli/command.js';
import { Args, Flags } from '../cli/flags.js';

export default defineCommand({
  summary: 'Install extensions from crates.io, git or a local directory.',
  aliases: ['i', 'add'],
  description: `Prints each package's contribution summary (server command, tools, hooks, MCP servers, prompt, commands) before placing it, verifies every download, and pins the result in extensions.lock. Install never enables: run \`yep-ext enable <name>\` afterwards (if settings.toml already turns the name on, yolop loads it at once, and install says so).

Over an installed extension of the same name: a newer version that \`update\` would reach too (a newer lsp over one that follows the newest) is installed without a question unless its grant widens; a downgrade, another requirement or ref, or another source asks first (without a TTY it needs --yes, or exits 7).

Sources:
  lsp                             crate yolop-extension-lsp, latest stable
  lsp@0.3.1 / 'lsp@^0.3'          exact version / cargo requirement
  crates.io:<crate>[@req]         any crate name
  https://host/org/repo.git[@rev] git, pinned to the resolved commit (#ref for refs with "/")
  ./dir, ../dir, /abs, ~/dir      a local package, referenced in place`,
  examples: [
    '<%= config.bin %> install lsp',
    "<%= config.bin %> install 'lsp@^0.3' crates.io:yolop-extension-logfire@1.2.0",
    '<%= config.bin %> install lsp --allow-build',
    '<%= config.bin %> install https://github.com/acme/yolop-ext.git@v1.2.0',
    '<%= config.bin %> install ./examples/echo-node',
    "<%= config.bin %> install 'lsp@^0.4' --dry-run",
    '<%= config.bin %> install lsp --min-age 3d',
    "<%= config.bin %> install 'lsp@^0.4' --dry-run --json",
    '<%= config.bin %> install --force lsp',
    '<%= config.bin %> install lsp@0.5.0 --ignore-engines',
    '<%= config.bin %> install --frozen --lockfile ./yolop-extensions.lock --enable',
  ],
  strict: false,
  args: {
    sources: Args.string({ ignoreStdin: true, description: 'What to install (repeatable): a name, crates.io:<crate>[@req], a git URL, or a path.' }),
  },
  flags: {
    ...indexFlag,
    ...minAgeFlag,
    ...allowFreshFlag,
    yes: Flags.boolean({ char: 'y', description: 'Replace an installed extension of the same name, and accept a wider grant, without asking.' }),
    accept: Flags.string({
      multiple: true,
      multipleNonGreedy: true,
      description: 'When reinstalling widens the grant: accept exactly this new grant fingerprint (repeatable).',
    }),
    force: Flags.boolean({
      description:
        'Fetch again and replace even when the lock says it is installed (repair after `yep-ext verify`): a name is fetched at exactly its locked version or commit and must match the lock; a path install is re-read and re-pinned.',
      exclusive: ['frozen', 'dry-run'],
    }),
    frozen: Flags.boolean({ description: 'Install exactly what a lockfile pins (no resolution); fail if anything differs. For CI provisioning.' }),
    enable: Flags.boolean({
      description: 'With --frozen: enable every locked extension (required config still missing is reported, exit 10).',
      dependsOn: ['frozen'],
    }),
    lockfile: Flags.string({
      description: "With --frozen: the lockfile to install from (default: the store's own extensions.lock; with neither, --frozen fails, exit 3).",
      dependsOn: ['frozen'],
    }),
    ...gitMirrorFlag,
    'ignore-engines': Flags.boolean({
      description:
        'Install the newest version even when its engines.yolop excludes the installed yolop (also enables such packages with --frozen --enable). Without it, install picks the newest version your yolop can run, and refuses an exact version it cannot.',
    }),
    ...buildFlag,
    ...allowBuildFlag,
    'dry-run': Flags.boolean({
      description:
        'Fetch and verify, then print the plan (new, unchanged, re-pinned or replaced; the grant diff; whether consent is needed) without changing anything.',
      exclusive: ['frozen'],
    }),
    ...timeoutFlag,
  },
  async run(io, { flags, argv }) {
    // --frozen has a body of its own: a warm frozen install loads none of the resolving code.
    if (flags.frozen) return (await import('../cli/frozen-run.js')).runFrozen(io, flags, argv);
    return (await import('../cli/install-run.js')).runInstall(io, flags, argv);
  },
});
