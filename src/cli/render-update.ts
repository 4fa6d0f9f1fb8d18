/**
 * What `update` prints, pure: each planned item with what moved (versions, and
 * for git the commits: `0.1.0 (e76da27 → e87d0a2)`), the "Updated" line, and the
 * newer release that the recorded requirement keeps out, with the install
 * command that takes it.
 */
import type { UpdateItem } from '../core/operations/update.js';
import { describeSource, pinnedCommit } from '../core/sources/index.js';
import type { LockSource } from '../core/sources/index.js';
import { sanitize } from '../core/text/sanitize.js';
import { renderDiff, renderSummary } from './render-grant.js';
import { bold, green, yellow } from './style.js';
import { outsideText } from './render-moves.js';

const ARROW = '→';

function commitOf(source: LockSource | undefined): string | undefined {
  const rev = source ? pinnedCommit(source) : undefined;
  return typeof rev === 'string' ? rev.slice(0, 7) : undefined;
}

/** `0.1.0 → 0.2.0`, `0.1.0 (e76da27 → e87d0a2)`, `0.1.0 → 0.2.0 (e76da27 → e87d0a2)`. */
function describeMove(item: Pick<UpdateItem, 'from' | 'to'>): string {
  const from = item.from.version ?? describeSource(item.from.source);
  const to = item.to?.version ?? (item.to ? describeSource(item.to.source) : '?');
  const [a, b] = [commitOf(item.from.source), commitOf(item.to?.source)];
  const commits = a && b && a !== b ? `${a} ${ARROW} ${b}` : undefined;
  const versions = from === to ? sanitize(from) : `${sanitize(from)} ${ARROW} ${sanitize(to)}`;
  if (commits) return `${versions} (${commits})`;
  if (from === to && item.from.content_hash !== item.to?.content_hash) return `${versions} (new content ${item.to?.content_hash.slice(7, 19) ?? ''})`;
  return versions;
}

/** The newer release outside the requirement and the install that takes it (render-moves.ts), or undefined. */
function outsideNote(item: UpdateItem): string | undefined {
  return item.newer_outside ? outsideText(item.newer_outside) : undefined;
}

export function renderPlanned(item: UpdateItem, dryRun: boolean): string {
  const outside = outsideNote(item);
  if (item.status === 'up-to-date') return `${sanitize(item.name)} is up to date.${outside ? ` ${outside}` : ''}`;
  if (item.status === 'held') {
    const why = (item.engines?.skipped ?? []).map((s) => sanitize(s.reason)).join('; ');
    return `${yellow('held')} ${sanitize(item.name)} stays at ${sanitize(item.from.version ?? describeSource(item.from.source))}: ${why} (upgrade yolop, or pass --ignore-engines).`;
  }
  if (item.status === 'failed') return `${yellow('✖')} ${sanitize(item.name)}: ${sanitize(item.error?.message ?? 'failed', { keepNewlines: true })}`;
  const lines = [`${bold(sanitize(item.name))} ${describeMove(item)}${dryRun ? ' (dry run)' : ''}`];
  if (item.first_approval && item.contributions) {
    // Installed by yolop (no grant on record): the whole contribution summary, as for a new install.
    lines.push('  no grant was ever approved for it through yep-ext (installed by yolop); it asks for:');
    // The fingerprint is named once, where consent is given (the refusal's hint, a dry run's line below).
    lines.push(...renderSummary(item.contributions, { fingerprint: false }).map((l) => `  ${l}`));
  } else if (item.diff) lines.push(...renderDiff(item.diff).map((l) => `  ${l}`));
  else if (item.consent_needed) lines.push('  the grant changed (the previously approved grant is not on record, so it cannot be shown as a diff)');
  if (item.binary) lines.push(`  ${sanitize(item.binary)}`);
  // Printed once: a dry run names the fingerprint here; a real run asks on a TTY, or its refusal's hint names it.
  if (item.consent_needed && dryRun)
    lines.push(`  ${yellow('consent needed')}: answer on a TTY, or pass --accept ${item.to?.grant} (exactly this grant) or --yes`);
  if (outside) lines.push(`  ${outside}`);
  return lines.join('\n');
}

export function renderUpdated(item: UpdateItem): string {
  return `${green('✔')} Updated ${sanitize(item.name)}: ${describeMove(item)}.`;
}
