/** oclif's command_not_found hook (package.json oclif.hooks): our message, a suggestion, exit 2. */
import type { Hook } from '@oclif/core';
import { failUnknownCommand } from '../unknown-command.js';

const hook: Hook<'command_not_found'> = async (opts) => {
  failUnknownCommand(opts.config, opts.id, process.argv.slice(2));
};

export default hook;
