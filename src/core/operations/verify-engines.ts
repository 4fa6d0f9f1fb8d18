/**
 * `verify`'s `engines` finding: an installed extension whose
 * `engines.yolop` excludes the installed agent. verify's job is integrity (the
 * store is what the lock pins), and a range is not integrity, so:
 * - enabled (as the host reads settings.toml): a problem of kind `engines`, since
 *   yolop loads a server built for another agent. When it is the only kind of
 *   problem, verify exits 4 (E_ENGINES, as `enable` refuses it), else 5.
 * - not enabled (or the enabled state unknown: settings.toml unreadable): a warning,
 *   exit unchanged (`enable` would refuse it; `install --frozen` warns the same way).
 * An unknown agent, no range, or a malformed one (a manifest warning `list` shows)
 * lists nothing. The agent is asked once per run, and only when a range is declared.
 */
import type { Context } from '../context.js';
import { isYepError } from '../errors.js';
import { checkAgainstAgent } from '../agent/agent-version.js';
import type { EnginesVerdict } from '../agent/engines.js';
import type { Manifest } from '../package/manifest.js';
import { loadSettingsText, settingsLookup } from '../settings/settings.js';
import type { VerifyProblem } from '../store/entry-check.js';

export interface EnginesFinding {
  /** The installed version's verdict; null when its manifest could not be read. */
  engines: EnginesVerdict | null;
  /** The `engines` problem of an enabled extension the agent cannot run. */
  problem?: VerifyProblem;
  /** The same of an extension that is not enabled: listed, not failing. */
  warning?: VerifyProblem;
}

/** Whether each named extension is enabled as the host reads settings.toml (undefined: unknown). */
async function enabledLookup(ctx: Context): Promise<(name: string) => boolean | undefined> {
  try {
    const text = await loadSettingsText(ctx.paths);
    if (text === undefined) return () => false;
    const of = settingsLookup(text, ctx.paths.settingsFile);
    return (name) => of(name).enabled;
  } catch (e) {
    if (!isYepError(e)) throw e;
    return () => undefined;
  }
}

/** The finding for each checked entry (by name), in one settings read. */
export async function enginesFindings(ctx: Context, checked: { name: string; manifest?: Manifest }[]): Promise<Map<string, EnginesFinding>> {
  const out = new Map<string, EnginesFinding>();
  let enabledOf: ((name: string) => boolean | undefined) | undefined;
  for (const { name, manifest } of checked) {
    if (!manifest) {
      out.set(name, { engines: null });
      continue;
    }
    const engines = await checkAgainstAgent(ctx, manifest);
    if (engines.status !== 'excludes') {
      out.set(name, { engines });
      continue;
    }
    enabledOf ??= await enabledLookup(ctx);
    const enabled = enabledOf(name);
    const version = manifest.version !== undefined ? `${manifest.version} ` : '';
    if (enabled === true) {
      out.set(name, {
        engines,
        problem: {
          kind: 'engines',
          message: `engines: ${version}${engines.detail}, and it is enabled: yolop cannot run it (upgrade yolop, install a version that supports it, or \`yep-ext disable ${name}\`)`,
          files: ['plugin.json'],
        },
      });
    } else {
      const state = enabled === false ? 'not enabled' : 'enabled state unknown';
      out.set(name, {
        engines,
        warning: { kind: 'engines', message: `engines: ${version}${engines.detail} (${state}; \`yep-ext enable\` refuses it)`, files: ['plugin.json'] },
      });
    }
  }
  return out;
}
