/**
 * `yep-ext __complete <words…>` (a Tab press in a shell; the scripts of `yep-ext
 * completion` call it): the candidates of complete.ts for the command table,
 * looked up in this home's store, as the text to print. No command of its own
 * (it is in no help, and its words are what the user is typing, never parsed as
 * flags). Never fails: a broken store or manifest just means fewer candidates.
 */
import { configFields } from '../core/package/manifest.js';
import { resolvePaths } from '../core/paths.js';
import { loadInstalledManifest } from '../core/store/installed-manifest.js';
import { installedNames } from '../core/store/installed-name.js';
import type { Env } from './cli-io.js';
import { COMMANDS } from './command-table.js';
import { globalFlags } from './common-flags.js';
import { completeWords, type CompletionCommand, type CompletionFlag } from './complete.js';

type FlagDef = Omit<CompletionFlag, 'name'>;

/** The table as complete.ts reads commands: each flag named, the global ones first (as oclif adds --json). */
export function completionCommands(): CompletionCommand[] {
  return Object.entries(COMMANDS).map(([id, def]) => ({
    id,
    aliases: def.aliases ?? [],
    summary: def.summary,
    description: def.description,
    strict: def.strict !== false,
    flags: Object.fromEntries(
      Object.entries({ ...globalFlags, ...def.flags } as Record<string, FlagDef>).map(([name, f]) => [
        name,
        { name, type: f.type, char: f.char, options: f.options, allowNo: f.allowNo, hidden: f.hidden, description: f.description, summary: f.summary },
      ]),
    ),
    args: Object.fromEntries(Object.entries(def.args ?? {}).map(([name, a]) => [name, { name, options: (a as { options?: string[] }).options }])),
  }));
}

export async function completionOutput(words: string[], env: Env): Promise<string> {
  const paths = resolvePaths(env);
  const candidates = await completeWords(completionCommands(), words.length > 0 ? words : [''], {
    installedNames: () => installedNames(paths),
    secretFields: async (name) => {
      try {
        return configFields(await loadInstalledManifest(paths, name))
          .filter((f) => f.secret)
          .map((f) => f.key);
      } catch {
        return [];
      }
    },
  }).catch(() => []);
  // Candidates are package-supplied text in part (names are checked; descriptions are ours): one line each.
  return candidates.map((c) => c.replace(/[\r\n]/g, ' ')).join('\n');
}
