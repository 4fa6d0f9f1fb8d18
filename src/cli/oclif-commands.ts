/**
 * The command table as oclif Command classes, for what oclif does for yep-ext:
 * help (help.ts), `oclif manifest` (oclif.manifest.json, which help and shell
 * completion read) and any oclif tool pointed at the package (package.json
 * oclif.commands names this module's COMMANDS in dist/bundle/cli.cjs). The
 * classes carry each definition as it is; they never run: every command line
 * goes through the dispatcher (dispatch.ts).
 */
import { Command } from '@oclif/core';
import type { CommandDefinition } from './command.js';
import { COMMANDS } from './command-table.js';
import { globalFlags } from './common-flags.js';

const { json: _json, ...flagsBesideJson } = globalFlags;

function classOf(id: string, def: CommandDefinition): Command.Class {
  return class extends Command {
    static override id = id;
    static override summary = def.summary;
    static override description = def.description;
    static override examples = def.examples;
    static override aliases = def.aliases ?? [];
    static override strict = def.strict !== false;
    static override args = def.args ?? {};
    // --json is oclif's own (enableJsonFlag); the other global flags are listed with it.
    static override flags = { ...flagsBesideJson, ...def.flags };
    static override enableJsonFlag = true;

    async run(): Promise<never> {
      throw new Error(`${id}: yep-ext commands run through the dispatcher (src/cli/dispatch.ts), not oclif's runner`);
    }
  };
}

/** Command id -> its oclif class. */
export function oclifCommands(): Record<string, Command.Class> {
  return Object.fromEntries(Object.entries(COMMANDS).map(([id, def]) => [id, classOf(id, def)]));
}
