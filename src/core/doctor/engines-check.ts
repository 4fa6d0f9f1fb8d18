/**
 * doctor's `engines` check: the manifest's `engines.yolop` against the installed
 * agent (`yolop --version`, cached). Present only when the manifest declares a
 * range. pass: the agent is in it; fail: it is not (yolop could run a server built
 * for another agent against the wrong protocol); warn: the agent's version is
 * unknown, or the range is malformed (constrains nothing).
 *
 * The check's code (semver, the agent probe) is loaded only for a manifest that
 * declares a range, as `list` does: evaluating semver's module set-up was a
 * measurable part of loading doctor's code, for a check most
 * extensions do not have. declaresEngines is the test checkAgainstAgent itself
 * starts with (engines.ts: enginesRequirement), so the answer is the same.
 */
import type { Context } from '../context.js';
import { declaresEngines } from '../agent/engines-declared.js';
import type { Manifest } from '../package/manifest.js';
import type { DoctorCheck } from './doctor.js';

export async function enginesCheck(ctx: Context, manifest: Manifest): Promise<DoctorCheck | undefined> {
  if (!declaresEngines(manifest.engines)) return undefined;
  const { checkAgainstAgent } = await import('../agent/agent-version.js');
  const v = await checkAgainstAgent(ctx, manifest);
  switch (v.status) {
    case 'none':
      return undefined;
    case 'admits':
      return { name: 'engines', status: 'pass', detail: v.detail };
    case 'excludes':
      return {
        name: 'engines',
        status: 'fail',
        detail: `${v.detail}: yolop cannot run this version (upgrade yolop, or use a version of the extension that supports ${v.agent})`,
      };
    case 'unknown-agent':
      return { name: 'engines', status: 'warn', detail: `${v.detail}; not checked (set YOLOP_BIN to the agent, or put yolop on PATH)` };
    case 'malformed':
      return { name: 'engines', status: 'warn', detail: `${v.detail}: write an npm range such as ">=0.12"` };
  }
}
