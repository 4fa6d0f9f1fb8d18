/** Human rendering of a doctor report (pure: data in, text out). Server-controlled text is sanitised. */
import type { DoctorReport } from '../core/doctor/doctor.js';
import { sanitize } from '../core/text/sanitize.js';
import { bold, dim, green, red, yellow, type StyleTarget } from './style.js';

const TAIL_LINES = 20;

export function renderDoctorReport(r: DoctorReport, stream?: StyleTarget): string {
  const mark = { pass: green('pass', stream), warn: yellow('warn', stream), fail: red('fail', stream) } as const;
  const width = Math.max(...r.checks.map((c) => c.name.length), 8);
  const lines = [`${bold(`doctor ${sanitize(r.name)}`, stream)} ${dim(`(${sanitize(r.package_dir)})`, stream)}`];
  for (const c of r.checks) lines.push(`  ${mark[c.status]}  ${c.name.padEnd(width)}  ${sanitize(c.detail, { max: 600 })}`);
  if (r.call) {
    lines.push('', `call ${sanitize(r.call.tool)}:`);
    for (const u of r.call.updates.slice(0, 50)) lines.push(`  update  ${sanitize(u, { max: 300 })}`);
    if (r.call.updates.length > 50) lines.push(`  …and ${r.call.updates.length - 50} more updates`);
    if (r.call.error !== undefined) lines.push(`  ${mark.fail}  ${sanitize(r.call.error)}`);
    else lines.push(`  result  ${sanitize(JSON.stringify(r.call.result) ?? 'null', { max: 2000 })}`);
  }
  if (r.problems.length > 1) {
    lines.push('', 'protocol problems:');
    for (const p of r.problems.slice(0, 20)) lines.push(`  - ${sanitize(p, { max: 400 })}`);
    if (r.problems.length > 20) lines.push(`  …and ${r.problems.length - 20} more`);
  }
  if (r.stderr_tail) {
    const tail = r.stderr_tail.replace(/\n$/, '').split('\n').slice(-TAIL_LINES);
    lines.push('', `server stderr (last ${tail.length} lines, secrets redacted):`);
    for (const l of tail) lines.push(`  ${dim('|', stream)} ${sanitize(l, { max: 400 })}`);
  }
  const count = (s: string): number => r.checks.filter((c) => c.status === s).length;
  const fails = count('fail');
  const warns = count('warn');
  lines.push(
    '',
    `${fails ? red(`${fails} failed`, stream) : green('no failures', stream)}, ${warns} warning${warns === 1 ? '' : 's'}, ${count('pass')} passed in ${(r.duration_ms / 1000).toFixed(1)} s`,
  );
  return lines.join('\n');
}
