/**
 * What `yep-ext doctor` does around runDoctor, shared by the oclif command
 * (src/commands/doctor.ts) and its oclif-free runner (src/cli/fast-doctor.ts)
 * so both accept the same --timeout and fail with the same error.
 */
import type { DoctorReport } from '../core/doctor/doctor.js';
import { YepError } from '../core/errors.js';

/** --timeout in seconds -> milliseconds (undefined: not given). */
export function parseDoctorTimeout(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600) throw new YepError('E_USAGE', `--timeout takes seconds, more than 0 and at most 3600 (got ${JSON.stringify(text)}).`, { hint: 'For example --timeout 5 or --timeout 0.5.' });
  return Math.round(seconds * 1000);
}

/** The error a failed report ends with (exit 9), after the report itself is printed. */
export function doctorFailedError(report: DoctorReport): YepError {
  const failed = report.checks.filter((c) => c.status === 'fail').map((c) => c.name);
  return new YepError('E_DOCTOR_FAILED', `${report.name}: ${failed.length} check(s) failed (${failed.join(', ')}).`, {
    hint: 'See docs/doctor.md for what each check means and how to fix it.',
  });
}
