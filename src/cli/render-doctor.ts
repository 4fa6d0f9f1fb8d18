/** Human rendering of a doctor report (pure: data in, text out). Server-controlled text is sanitised. */
import type { DoctorReport } from '../core/doctor/doctor.js';
import { sanitize } from '../core/text/sanitize.js';
import { bold, dim, green, red, yellow, type StyleTarget } from './style.js';

const TAIL_LINES = 20;

/**
 * What each check is about, in words a new user reads without the protocol's vocabulary. The
 * `--json` report keeps the stable check names (`handshake`, `stdin_eof`…: host-compatible,
 * docs/json.md); docs/doctor.md's table gives both.
 */
const LABELS: Record<string, string> = {
  manifest: 'plugin.json',
  engines: 'yolop version',
  config: 'settings and secrets',
  command: 'server program',
  spawn: 'server starts',
  handshake: 'server answers',
  protocol_version: 'protocol version',
  name: 'server name',
  capabilities: 'features offered',
  tools: 'tools',
  prompt: 'prompt',
  notifications: 'routine updates',
  cancel: 'cancelling',
  unknown_method: 'unknown requests',
  dynamic_prompt: 'prompt each turn',
  hooks: 'hooks',
  call: 'tool call',
  ui_ask: 'questions to the user',
  shutdown: 'stops when asked',
  stdin_eof: 'stops when input closes',
  messages: 'message format',
  processes: 'leftover processes',
  mcp_record: 'MCP record',
};

/** A check's name for people: `mcp:<server>` and `mcp_changes:<server>` name the server. */
export function checkLabel(name: string): string {
  if (name.startsWith('mcp:')) return `MCP server ${name.slice(4)}`;
  if (name.startsWith('mcp_changes:')) return `MCP ${name.slice(12)} changes`;
  return LABELS[name] ?? name;
}

/**
 * The report as text. `quiet` (-q): only the checks that warn or fail, then the one
 * result line, as cargo's -q keeps warnings and errors and drops the rest.
 */
export function renderDoctorReport(r: DoctorReport, stream?: StyleTarget, quiet = false): string {
  const mark = { pass: green('pass', stream), warn: yellow('warn', stream), fail: red('fail', stream) } as const;
  const labels = r.checks.map((c) => sanitize(checkLabel(c.name)));
  const width = Math.max(...labels.map((l) => l.length), 8);
  const lines = quiet ? [] : [`${bold(`doctor ${sanitize(r.name)}`, stream)} ${dim(`(${sanitize(r.package_dir)})`, stream)}`];
  for (const [i, c] of r.checks.entries()) {
    if (quiet && c.status === 'pass') continue;
    lines.push(`  ${mark[c.status]}  ${(labels[i] ?? c.name).padEnd(width)}  ${sanitize(c.detail, { max: 600 })}`);
  }
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
  const result = `${fails ? red(`${fails} failed`, stream) : green('no failures', stream)}, ${warns} warning${warns === 1 ? '' : 's'}, ${count('pass')} passed in ${(r.duration_ms / 1000).toFixed(1)} s`;
  if (quiet) return [...lines, `doctor ${sanitize(r.name)}: ${result}`].join('\n');
  lines.push('', result);
  return lines.join('\n');
}
