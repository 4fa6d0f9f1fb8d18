/** Human rendering of install results (pure: data in, lines out). */
import type { InstallOutcome, InstallPreview } from '../core/operations/install.js';
import { describeSource } from '../core/operations/install.js';
import { sanitize } from '../core/text/sanitize.js';
import { renderDiff, renderSummary } from './render-grant.js';
import { bold, green, yellow } from './style.js';

/** Contribution summary (and, when replacing, the contribution diff) printed before anything is placed. */
export function renderPreview(p: InstallPreview): string {
  const m = p.manifest;
  const head = `${bold(`${sanitize(m.name)}${m.version ? ` ${sanitize(m.version)}` : ''}`)} from ${sanitize(describeSource(p.source))}`;
  const lines = [head, ...renderSummary(p.grant.grant).map((l) => `  ${l}`)];
  if (p.binary) lines.push(`  ${sanitize(p.binary)}`);
  if (p.diff && p.diff.changes.length > 0) lines.push('', `Changes against the installed ${sanitize(m.name)}:`, ...renderDiff(p.diff).map((l) => `  ${l}`));
  return lines.join('\n');
}

export function renderOutcome(o: InstallOutcome): string {
  const what = sanitize(`${o.name}${o.version ? ` ${o.version}` : ''}`);
  const verb = { installed: 'Installed', replaced: 'Replaced', repinned: 'Re-pinned', unchanged: 'Already installed:' }[o.status];
  const lines = [`${green('✔')} ${verb} ${what} (${sanitize(describeSource(o.source))})`];
  if (!o.command.found) lines.push(`  ${yellow('note')}: the server command cannot be found yet: ${sanitize(o.command.detail)}`);
  for (const n of o.notes) lines.push(`  ${yellow('note')}: ${sanitize(n)}`);
  if (o.status === 'installed') lines.push(`  Not enabled. Run \`yep-ext enable ${o.name}\` to turn it on.`);
  return lines.join('\n');
}
