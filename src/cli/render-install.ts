/**
 * Human rendering of install results (pure: data in, lines out). Sources are named as
 * `list` names them (sourceLabel): a crate from a mirror index by the index host, never
 * as `crates.io:`.
 */
import type { InstallOutcome, InstallPlan, InstallPreview } from '../core/operations/install.js';
import { sourceLabel } from '../core/sources/index.js';
import { sanitize } from '../core/text/sanitize.js';
import { renderDiff, renderSummary } from './render-grant.js';
import { bold, green, yellow } from './style.js';

/**
 * Contribution summary (and, when replacing, the contribution diff) printed before anything
 * is placed. A grant that widens what was approved is named where consent is given (the
 * refusal's `--accept` hint, the dry run's plan), so the summary leaves its fingerprint out:
 * it is printed once.
 */
export function renderPreview(p: InstallPreview): string {
  const m = p.manifest;
  const head = `${bold(`${sanitize(m.name)}${m.version ? ` ${sanitize(m.version)}` : ''}`)} from ${sanitize(sourceLabel(p.source))}`;
  const lines = [head, ...renderSummary(p.grant.grant, { fingerprint: p.diff?.widens !== true }).map((l) => `  ${l}`)];
  if (p.binary) lines.push(`  ${sanitize(p.binary)}`);
  if (p.diff && p.diff.changes.length > 0) lines.push('', `Changes against the installed ${sanitize(m.name)}:`, ...renderDiff(p.diff).map((l) => `  ${l}`));
  return lines.join('\n');
}

/**
 * `enabled`: whether settings.toml turns the name on now (yolop loads it); null when it could not be read.
 * `quiet` (-q): the result line and its notes (what was not done), not the next-step hint.
 */
export function renderOutcome(o: InstallOutcome, enabled: boolean | null = false, quiet = false): string {
  const what = sanitize(`${o.name}${o.version ? ` ${o.version}` : ''}`);
  const verb = { installed: 'Installed', replaced: 'Replaced', repinned: 'Re-pinned', unchanged: 'Already installed:', reinstalled: 'Reinstalled' }[o.status];
  const lines = [`${green('✔')} ${verb} ${what} (${sanitize(sourceLabel(o.source))})`];
  if (!o.command.found) lines.push(`  ${yellow('note')}: the server command cannot be found yet: ${sanitize(o.command.detail)}`);
  for (const n of o.notes) lines.push(`  ${yellow('note')}: ${sanitize(n)}`);
  if (quiet) return lines.join('\n');
  if (o.status === 'installed' && enabled === true) {
    // Install never enables; an entry already in settings.toml does, and yolop loads the package now.
    lines.push(`  ${yellow('Enabled')}: settings.toml already turns ${o.name} on, so yolop loads it now. Run \`yep-ext disable ${o.name}\` to turn it off.`);
  } else if (o.status === 'installed' && enabled === false) lines.push(`  Not enabled. Run \`yep-ext enable ${o.name}\` to turn it on.`);
  return lines.join('\n');
}

/** One plan line (`install --dry-run`), printed after the preview. */
export function renderPlan(p: InstallPlan): string {
  const what = sanitize(`${p.name}${p.version ? ` ${p.version}` : ''}`);
  const from = sanitize(sourceLabel(p.source));
  const lines = [
    `${
      {
        new: `Would install ${what} (${from}).`,
        unchanged: `${what} is already installed from ${from}: nothing to do.`,
        repinned: `Would re-pin ${what} (${from}).`,
        replaced: p.replace_asks
          ? `Would replace ${sanitize(p.name)}: ${sanitize(p.replace_reason ?? '')}; this asks first (or needs --yes).`
          : `Would move ${sanitize(p.name)} forward: ${sanitize(p.replace_reason ?? '')} (as \`yep-ext update\` would; no question).`,
      }[p.action]
    } (dry run)`,
  ];
  if (p.consent_needed) lines.push(`  ${yellow('consent needed')}: answer on a TTY, or pass --accept ${p.grant} (exactly this grant) or --yes`);
  return lines.join('\n');
}
