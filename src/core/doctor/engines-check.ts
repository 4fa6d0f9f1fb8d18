/**
 * doctor's `engines` check: the manifest's `engines.yolop` against the installed
 * agent (`yolop --version`, cached). Present only when the manifest declares a
 * range. pass: the agent is in it; fail: it is not (yolop could run a server built
 * for another agent against the wrong protocol); warn: the agent's version is
 * unknown, or the range is malformed (constrains nothing).
 */
import type { Context } from '../context.js';
import { checkAgainstAgent } from '../agent/agent-version.js';
import type { Manifest } from '../package/manifest.js';
import type { DoctorCheck } from './doctor.js';

export async function enginesCheck(ctx: Context, manifest: Manifest): Promise<DoctorCheck | undefined> {
  const v = await checkAgainstAgent(ctx, manifest);
  switch (v.status) {
    case 'none':
      return undefined;
    case 'admits':
      return { name: 'engines', status: 'pass', detail: v.detail };
    case 'excludes':
      return { name: 'engines', status: 'fail', detail: `${v.detail}: yolop cannot run this version (upgrade yolop, or use a version of the extension that supports ${v.agent})` };
    case 'unknown-agent':
      return { name: 'engines', status: 'warn', detail: `${v.detail}; not checked (set YOLOP_BIN to the agent, or put yolop on PATH)` };
    case 'malformed':
      return { name: 'engines', status: 'warn', detail: `${v.detail}: write an npm range such as ">=0.12"` };
  }
}
