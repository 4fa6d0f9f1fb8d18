/**
 * Flags several commands share, defined once. Each also feeds the run's Context
 * (cli-context.ts) when a command declares it.
 */
import { DEFAULT_TOTAL_MS } from '../core/net/http-settings.js';
import { formatTimeout } from '../core/text/duration.js';
import { Args, Flags } from './flags.js';

/**
 * The flags every command has, in every place that lists a command's flags: the
 * parser (dispatch.ts), help (oclif-commands.ts), usage errors (command-shape.ts) and
 * shell completion (complete-run.ts). `--json` is oclif's own (Command.enableJsonFlag);
 * `--no-color` as npm spells it (and as oclif's help reads it): no colour on either
 * stream, whatever the terminal or FORCE_COLOR says (cli-io.ts colorOff); `-q`/`-v`
 * as cargo has them on every command.
 */
export const globalFlags = {
  json: Flags.boolean({ description: 'Format output as json.', helpGroup: 'GLOBAL' }),
  'no-color': Flags.boolean({ description: 'No colours (also NO_COLOR).', helpGroup: 'GLOBAL' }),
  // As cargo's -q and -v: every command takes them (what is shown while a command waits: docs/feedback.md).
  quiet: Flags.boolean({
    char: 'q',
    description: 'Print at most the result line: no progress, notes or next steps (warnings and errors still show).',
    exclusive: ['verbose'],
    helpGroup: 'GLOBAL',
  }),
  verbose: Flags.boolean({
    char: 'v',
    description: 'Show each request, retry and git command; without a terminal, also one line per step (for CI logs).',
    exclusive: ['quiet'],
    helpGroup: 'GLOBAL',
  }),
};

/**
 * --index, for the commands that talk to a registry (install, update, search,
 * outdated, info, mirror) and only those: a flag a command ignores is a flag that lies.
 */
export const indexFlag = {
  index: Flags.string({
    description: 'Sparse index root to use instead of crates.io (also YEP_EXT_INDEX). Accepts a sparse+ prefix.',
    helpValue: '<url>',
  }),
};

/** The release-age cooldown flag of install, update, outdated and info (docs/policy.md). */
export const minAgeFlag = {
  'min-age': Flags.string({
    description: 'Skip versions published less than this long ago (90m, 36h, 3d, 1w; also YEP_EXT_MIN_AGE). The policy file may set a floor.',
    helpValue: '<duration>',
  }),
};

/** --allow-fresh: install an exactly named version younger than the cooldown (install only). */
export const allowFreshFlag = {
  'allow-fresh': Flags.boolean({
    description: "Install an exactly named version even when it is younger than --min-age / YEP_EXT_MIN_AGE (never below the policy file's min_age).",
  }),
};

/** --git-mirror, for the commands that fetch git sources (install, update). */
export const gitMirrorFlag = {
  'git-mirror': Flags.string({
    description:
      'Fetch git sources (and resolve their branches and tags) from this mirror instead of their origin: the git/ root of a `yep-ext mirror` tree or any server laid out the same way (also YEP_EXT_GIT_MIRROR). The lock keeps the origin URLs. See docs/fleet.md.',
    helpValue: '<url>',
  }),
};

// Every argument is declared with `ignoreStdin: true`: oclif otherwise fills a
// missing argument from piped standard input (`printf lsp | yep-ext disable`
// would disable lsp, and set-secret's piped secret would land in an argument).

/**
 * --profile, for the commands that read or write what settings.toml enables
 * (enable, disable, list, info): yolop's `--profile <name>`, whose entries live in
 * `<config>/profiles/<name>.toml` (docs/configuration.md, "Profiles").
 */
export const profileFlag = {
  profile: Flags.string({
    description:
      "Read and write yolop's profile <name> (<config>/profiles/<name>.toml, as `yolop --profile <name>` applies it) instead of settings.toml alone.",
    helpValue: '<name>',
  }),
};

/**
 * --timeout, for the commands that wait on a registry or a git host (install, update,
 * outdated, info, search, mirror): the total for a server that does not answer.
 */
export const timeoutFlag = {
  timeout: Flags.string({
    description: `Give up on a server that does not answer after this long, every retry included (default ${formatTimeout(DEFAULT_TOTAL_MS)}; 30s, 5m, 1h).`,
    helpValue: '<duration>',
  }),
};

/** --build / --no-build, for the commands that may provision a crate's server (install, update). */
export const buildFlag = {
  build: Flags.boolean({
    allowNo: true,
    description:
      'Build the server binary from the crate with cargo even when a prebuilt one exists (--build, which is consent to run the build), or never build it (--no-build: package only). Default: build only when no prebuilt binary fits this host, cargo is on PATH and you consent (--allow-build, or yes at the prompt). See docs/binaries.md.',
  }),
};

/** --allow-build: this run's consent to run a crate's build (docs/binaries.md). */
export const allowBuildFlag = {
  'allow-build': Flags.boolean({
    description:
      "Consent to building a crate's server from source with cargo when no prebuilt binary fits this host: its build scripts and compiler plugins run on this machine. --yes does not give this consent; without it (and without a terminal to ask) the package is installed without its server. The policy file can forbid builds ([binaries] build_from_source = false).",
  }),
};

/**
 * The one definition of each flag that feeds the Context (cli-context.ts). A command's
 * own flag that only shares a name (doctor's --timeout, in seconds, for the handshake)
 * is that command's, and never reaches the Context.
 */
export const CONTEXT_FLAGS = {
  ...indexFlag,
  ...minAgeFlag,
  ...allowFreshFlag,
  ...gitMirrorFlag,
  ...timeoutFlag,
  ...buildFlag,
  ...allowBuildFlag,
};

/** The argument of every command that acts on one installed extension, resolved by the one resolver (store/installed-name.ts). */
export const installedNameArg = Args.string({
  ignoreStdin: true,
  required: true,
  description: 'Installed extension name (yolop-extension-<name> works too), or the directory a path install came from (`.` inside it).',
});
