/**
 * The CLI's entry in dist/bundle/cli.cjs: bin/run.js calls `main` with the command
 * line and exits with the status it returns.
 */
import { processIo } from './cli-io.js';
import { runCli } from './dispatch.js';

export function main(argv: string[]): Promise<number> {
  return runCli(argv, processIo());
}
