/**
 * A command's flags, arguments and examples, and the other commands' flags, as
 * usage-errors.ts wants them to word a parse error. Loaded only for an error.
 */
import type { CommandDefinition } from './command.js';
import { globalFlags } from './common-flags.js';
import { COMMANDS } from './command-table.js';
import { displayId, exampleLines, type CommandShape, type FlagShape } from './usage-errors.js';

type FlagLike = Partial<FlagShape> & { type?: string };

function toShape(flags: Record<string, FlagLike> | undefined): Record<string, FlagShape> {
  return Object.fromEntries(
    Object.entries(flags ?? {}).map(([name, f]) => [
      name,
      {
        name,
        char: f.char,
        type: f.type === 'boolean' ? 'boolean' : 'option',
        options: f.options,
        allowNo: f.allowNo,
        description: f.description,
        summary: f.summary,
        hidden: f.hidden,
      },
    ]),
  );
}

export function commandShape(id: string, def: CommandDefinition, argv: string[]): CommandShape {
  const flags = toShape({ ...globalFlags, ...def.flags } as Record<string, FlagLike>);
  const args = Object.fromEntries(
    Object.entries((def.args ?? {}) as Record<string, { description?: string; required?: boolean; options?: string[]; hidden?: boolean }>)
      .filter(([, a]) => !a.hidden)
      .map(([name, a]) => [name, { name, description: a.description, required: a.required, options: a.options }]),
  );
  const others = Object.entries(COMMANDS)
    .filter(([other]) => other !== id)
    .map(([other, d]) => ({ id: displayId(other), flags: [...Object.keys(globalFlags), ...Object.keys(d.flags ?? {})] }));
  return { id: displayId(id), flags, args, examples: exampleLines(def.examples), others, argv };
}
