/** What `yep-ext doctor` does around runDoctor (doctor-run.ts): its --timeout, and the error a failed report ends with. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { DoctorReport } from '../core/doctor/doctor.js';
import { YepError } from '../core/errors.js';

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
export function doctorFailedError(report: DoctorReport): YepError {
  const failed = report.checks.filter((c) => c.status === 'fail').map((c) => c.name);
  return new YepError('E_DOCTOR_FAILED', `${report.name}: ${failed.length} ${failed.length === 1 ? 'check' : 'checks'} failed (${failed.join(', ')}).`, {
    hint: nextStep(report) ?? 'See docs/doctor.md for what each check means and how to fix it.',
  });
}

/**
 * The next step for the failures an author meets first in the authoring loop, where the
 * generic pointer to docs/doctor.md would leave them guessing: a Rust package whose server
 * is not built yet (`yep-ext new -l rust`, then doctor before the build step), and a
 * directory that is no package at all.
 */
function nextStep(report: DoctorReport): string | undefined {
  if (report.source !== 'path') return undefined;
  const detail = (name: string): string | undefined => report.checks.find((c) => c.name === name && c.status === 'fail')?.detail;
  if (detail('manifest')?.startsWith('No plugin.json in ')) {
    return 'Pass the package directory (the one holding plugin.json), or create one with `yep-ext new <name> --tool <tool>`.';
  }
  // The command check's own wording (src/core/package/inspect-command.ts) names the missing command.
  const command = /^"([^"/]+)" is neither in the package's bin\//.exec(detail('command') ?? '')?.[1];
  if (command !== undefined && existsSync(join(report.package_dir, 'Cargo.toml'))) {
    return `${report.name} is a Rust crate whose server is not built yet: run \`(cd ${report.package_dir} && cargo build --release && cp target/release/${command} bin/)\`, then doctor again.`;
  }
  return undefined;
}
