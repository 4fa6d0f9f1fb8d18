/**
 * Set-up installs without a CLI process. Many tests need a home where something is
 * already installed before they run the command they are about: spawning
 * `yep-ext install --yes <specs>` for that costs a whole CLI process (Node's start
 * and the bundle's load) for each set-up. This runs the same core call
 * `install --yes` makes (src/cli/install-run.ts: installMany with --yes's hooks,
 * no TTY) in the test's own process, on the home's environment. The state it leaves
 * is the core's own: lock, store, grants and tree-state signatures of the real
 * files (unlike a copied home, whose signatures name other inodes and paths).
 *
 * Only for set-up: a test about `install` itself runs the command. Each set-up install
 * saves most of a CLI process's CPU, but the core modules load once per test file
 * (vitest's transform, shared by every file of a whole run, plus the import in the
 * worker). So it pays where a file needs many set-up installs, not for two or three.
 */
import { createContext } from '../../src/core/context.js';
import { memoryLogger } from '../../src/core/log.js';
import { loadLock } from '../../src/core/store/lockfile.js';
import { seamsFromEnv } from './seams.mjs';

/**
 * `yep-ext install --yes ...specs` in `env`'s home, in this process (relative paths against `cwd`): throws (with
 * every failure's message) unless every spec installed and the lock on disk pins each
 * of them as reported. `ignoreEngines`: what `--ignore-engines` passes. Returns the installed names.
 */
export async function setupInstall(env: Record<string, string>, specs: string[], options: { cwd?: string; ignoreEngines?: boolean } = {}): Promise<string[]> {
  const { installMany } = await import('../../src/core/operations/install.js');
  const seams = seamsFromEnv(env);
  const ctx = createContext({ ...seams, env, log: memoryLogger(), interactive: false, cooldown: { allowFresh: false } });
  const results = await installMany(
    ctx,
    specs,
    {
      ignoreEngines: options.ignoreEngines ?? false,
      refuseReplace: false,
      confirmWiden: async () => true,
      confirmReplace: async () => true,
    },
    options.cwd ?? process.cwd(),
  );
  const failed = results.flatMap((r) => (r.ok ? [] : [`${r.spec}: ${r.error.message}`]));
  if (failed.length > 0) throw new Error(`set-up install failed:\n${failed.join('\n')}`);
  const installed = results.flatMap((r) => (r.ok ? [r.outcome] : []));
  const lock = await loadLock(ctx.paths.lockFile);
  for (const o of installed) {
    const entry = lock.entries.find((e) => e.name === o.name);
    if (entry?.content_hash !== o.content_hash) throw new Error(`set-up install: ${o.name} is not in ${ctx.paths.lockFile} as installed`);
  }
  return installed.map((o) => o.name);
}
