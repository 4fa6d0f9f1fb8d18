/** The body of `yep-ext outdated` (src/commands/outdated.ts). */
import { ERROR_CODES, YepError } from '../core/errors.js';
import { anyOutdated, outdatedReport } from '../core/operations/outdated.js';
import { ExitStatus, type CommandIo, type Parsed } from './command.js';
import { outdatedJson, renderOutdated } from './render-outdated.js';
import { stdoutShape } from './terminal.js';

export async function outdatedCommand(io: CommandIo, { flags, argv }: Parsed<{ 'exit-code': boolean }>): Promise<unknown> {
  const ctx = io.context();
  const { items, unlocked } = await outdatedReport(ctx, argv);
  const json = io.json;
  const doc = outdatedJson(items, unlocked);
  // The host loads them too, and no lock entry says where they came from: nothing to compare, but not "nothing installed".
  if (unlocked.length > 0)
    ctx.log.warn(
      `The store holds ${unlocked.length === 1 ? 'a package' : 'packages'} no lock entry pins (${unlocked.join(', ')}): yolop loads ${unlocked.length === 1 ? 'it' : 'them'}, but with no recorded source ${unlocked.length === 1 ? 'it has' : 'they have'} nothing to compare; \`yep-ext verify\` names ${unlocked.length === 1 ? 'it' : 'them'}.`,
    );
  const failed = items.filter((i) => i.status === 'failed');
  const damaged = items.filter((i) => i.status === 'damaged');
  // Said whatever the exit: the row's current is the lock's pin, not what the host loads.
  for (const d of damaged) ctx.log.warn(`${d.name}: ${d.error!.message}; repair it with \`${d.hint}\`.`);
  const exit =
    failed.length > 0
      ? failed.length === items.length
        ? (ERROR_CODES[failed[0]!.error!.code] ?? ERROR_CODES.E_PARTIAL)
        : ERROR_CODES.E_PARTIAL
      : flags['exit-code'] && damaged.length > 0
        ? ERROR_CODES.E_INTEGRITY
        : flags['exit-code'] && anyOutdated(items)
          ? ERROR_CODES.E_OUTDATED
          : 0;
  if (exit === 0) {
    if (!json) io.log(await renderOutdated(items, stdoutShape(io.io), unlocked));
    return doc;
  }
  // The table (or document) is the answer either way: print it whole, then exit.
  if (json) io.logJson(doc);
  else io.log(await renderOutdated(items, stdoutShape(io.io), unlocked));
  if (failed.length > 0 && !json) {
    throw new YepError(
      failed.length === items.length ? failed[0]!.error!.code : 'E_PARTIAL',
      `Could not check ${failed.map((f) => f.name).join(', ')}: ${failed[0]!.error!.message}`,
      {
        ...(failed[0]!.error!.hint ? { hint: failed[0]!.error!.hint } : {}),
      },
    );
  }
  throw new ExitStatus(exit);
}
