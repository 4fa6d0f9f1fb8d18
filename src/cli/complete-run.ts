/**
 * `yep-ext __complete` (answered by the oclif-free fast path): the candidates of
 * complete.ts, looked up in this home's store, as the text to print. Never
 * fails: a broken store or manifest just means fewer candidates.
 */
import { configFields } from '../core/package/manifest.js';
import { resolvePaths } from '../core/paths.js';
import { loadInstalledManifest } from '../core/store/installed-manifest.js';
import { installedNames } from '../core/store/installed-name.js';
import { completeWords, type CompletionCommand } from './complete.js';

export async function completionOutput(commands: CompletionCommand[], words: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const paths = resolvePaths(env);
  const candidates = await completeWords(commands, words.length > 0 ? words : [''], {
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
