/** What `yep-ext doctor` does around runDoctor (doctor-run.ts): its --timeout, and the error a failed report ends with. */
import type { DoctorReport } from '../core/doctor/doctor.js';
import { YepError } from '../core/errors.js';
import { loadManifest } from '../core/package/manifest.js';
import { unbuiltServer } from '../core/package/server-build.js';
import { checkLabel } from './render-doctor.js';

/** --timeout in seconds -> milliseconds (undefined: not given). */
export function parseDoctorTimeout(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600)
    throw new YepError('E_USAGE', `--timeout takes seconds, more than 0 and at most 3600 (got ${JSON.stringify(text)}).`, {
      hint: 'For example --timeout 5 or --timeout 0.5.',
    });
  return Math.round(seconds * 1000);
}

/** The error a failed report ends with (exit 9), after the report itself is printed. */
export async function doctorFailedError(report: DoctorReport): Promise<YepError> {
  const failed = report.checks.filter((c) => c.status === 'fail').map((c) => checkLabel(c.name));
  return new YepError('E_DOCTOR_FAILED', `${report.name}: ${failed.length} ${failed.length === 1 ? 'check' : 'checks'} failed (${failed.join(', ')}).`, {
    hint: (await nextStep(report)) ?? 'See docs/doctor.md for what each check means and how to fix it.',
  });
}

/**
 * The next step for the failures an author meets first in the authoring loop, where the
 * generic pointer to docs/doctor.md would leave them guessing: a package whose server is
 * not built yet (`yep-ext new`, then doctor before the build step: core/package/server-build.ts
 * says how it is built), and a directory that is no package at all.
 */
async function nextStep(report: DoctorReport): Promise<string | undefined> {
  if (report.source !== 'path') return undefined;
  const detail = (name: string): string | undefined => report.checks.find((c) => c.name === name && c.status === 'fail')?.detail;
  if (detail('manifest')?.startsWith('No plugin.json in ')) {
    return 'Pass the package directory (the one holding plugin.json), or create one with `yep-ext new <name>`.';
  }
  const command = await loadManifest(report.package_dir).then(
    (m) => m.yolop.capabilityServer.command,
    () => undefined,
  );
  const build = command === undefined ? undefined : unbuiltServer(report.package_dir, command);
  if (build) return `${report.name}'s server is not built yet (${build.missing} is missing): run \`${build.command}\`, then doctor again.`;
  return undefined;
}
