/**
 * oclif's Args and Flags, as the command definitions (src/commands) import them: the
 * same builders as `import { Args, Flags } from '@oclif/core'`, from the modules that
 * hold them, so that loading the command table does not load the rest of oclif
 * (its help, config and plugin loader are needed for help only: help.ts).
 */
export * as Args from '@oclif/core/args';
export * as Flags from '@oclif/core/flags';
