/** Human rendering of install results (pure: data in, lines out). */
import type { InstallOutcome, InstallPreview } from '../core/operations/install.js';
import { describeSource } from '../core/operations/install.js';
import { sanitize } from '../core/sanitize.js';
import { bold, green, yellow } from './style.js';

/** Contribution summary printed before anything is placed. */
export function renderPreview(p: InstallPreview): string {
  const m = p.manifest;
  const y = m.yolop;
  const lines = [`${bold(`${sanitize(m.name)}${m.version ? ` ${sanitize(m.version)}` : ''}`)} from ${sanitize(describeSource(p.source))}`];
  lines.push(`  server    ${sanitize([y.capabilityServer.command, ...y.capabilityServer.args].join(' '))}`);
  if (y.tools.length) lines.push(`  tools     ${y.tools.map((t) => sanitize(t.name) + (t.never_defer ? ' (never_defer)' : '')).join(', ')}`);
  for (const h of y.hooks) lines.push(`  hook      ${h.event} on ${h.tool_name_glob === '*' ? yellow('"*" (every tool)') : sanitize(h.tool_name_glob)}, on_error=${h.on_error}`);
  for (const [n, s] of Object.entries(y.mcpServers)) lines.push(`  mcp       ${sanitize(n)} (${s.type}: ${sanitize(s.type === 'http' ? (s.url ?? '') : [s.command ?? '', ...s.args].join(' '))})`);
  if (y.prompt || y.dynamic_prompt) lines.push(`  prompt    ${[y.prompt ? 'static' : '', y.dynamic_prompt ? 'dynamic (recomputed every turn)' : ''].filter(Boolean).join(' + ')}`);
  if (y.commands.length) lines.push(`  commands  ${y.commands.map((c) => `${sanitize(m.name)}:${sanitize(c.name)}`).join(', ')}`);
  const optIns = (['status', 'ui_ask', 'trace', 'skills'] as const).filter((k) => y[k]);
  if (optIns.length) lines.push(`  opt-ins   ${optIns.join(', ')}`);
  return lines.join('\n');
}

export function renderOutcome(o: InstallOutcome): string {
  const what = `${o.name}${o.version ? ` ${o.version}` : ''}`;
  const verb = { installed: 'Installed', replaced: 'Replaced', repinned: 'Re-pinned', unchanged: 'Already installed:' }[o.status];
  const lines = [`${green('✔')} ${verb} ${what} (${describeSource(o.source)})`];
  if (!o.command.found) lines.push(`  ${yellow('note')}: the server command cannot be found yet: ${o.command.detail}`);
  for (const n of o.notes) lines.push(`  ${yellow('note')}: ${n}`);
  if (o.status === 'installed') lines.push(`  Not enabled. Run \`yep-ext enable ${o.name}\` to turn it on.`);
  return lines.join('\n');
}
