/**
 * Flags several commands share, defined once. Each also feeds the run's Context
 * (cli-context.ts) when a command declares it.
 */
import { Flags } from './flags.js';

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

/**
 * --quiet and --verbose, for the commands that wait on the network, git, a
 * spawned process or a large hash (install, update, search, doctor, list): what
 * is shown while they wait is docs/feedback.md.
 */
export const feedbackFlags = {
  quiet: Flags.boolean({
    char: 'q',
    description: 'Show no progress and no notes while working: only warnings, errors and the result.',
    exclusive: ['verbose'],
  }),
  verbose: Flags.boolean({
    description: 'Show each request, retry and git command; without a terminal, also one line per step (for CI logs).',
    exclusive: ['quiet'],
  }),
};

/** The release-age cooldown flag of install and update (docs/policy.md). */
export const minAgeFlag = {
  'min-age': Flags.string({
    description: 'Skip versions published less than this long ago (90m, 36h, 3d, 1w; also YEP_EXT_MIN_AGE). The policy file may set a floor.',
    helpValue: '<duration>',
  }),
};

// Every argument is declared with `ignoreStdin: true`: oclif otherwise fills a
// missing argument from piped standard input (`printf lsp | yep-ext disable`
// would disable lsp, and set-secret's piped secret would land in an argument).
