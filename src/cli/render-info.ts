/**
 * What `info` prints: labelled lines, the contribution summary (the install
 * renderer's, render-grant.ts), config states and the checks; and the `--json`
 * document, whose every key is present (null when it does not apply). Secrets
 * appear only as set/unset: the result never holds a configured value. Pure.
 */
import type { InfoResult } from '../core/operations/info.js';
import { isLinked } from '../core/sources/index.js';
import type { Upstream } from '../core/sources/source.js';
import { sanitize } from '../core/text/sanitize.js';
import { renderSummary } from './render-grant.js';
import { approvalOf } from '../core/package/grants.js';
import { SOURCE_TEXT } from './render-config.js';
import { bold, green, yellow } from './style.js';
import { outsideText, updateCommand } from './render-moves.js';

export function infoJson(info: InfoResult): InfoResult {
  return info;
}

const clean = (text: string, max = 300): string => sanitize(text, { max });
/** `label:` padded to the value column; no label continues the line above (no lone colon). */
const line = (label: string, value: string): string => `${(label ? `${label}:` : '').padEnd(14)}${value}`;

function versionsLine(versions: Upstream['versions'], max = 8): string {
  const shown = versions.slice(0, max).map((v) => clean(v.version, 40) + (v.yanked ? ' (yanked)' : ''));
  return shown.join(', ') + (versions.length > max ? `, … (${versions.length} in all)` : '');
}

export function renderInfo(info: InfoResult): string {
  if (!info.installed) {
    const r = info.registry;
    const lines = [bold(`${clean(info.name)} (not installed)`)];
    if (info.verify && !info.verify.ok) lines.push(line('checks', yellow(info.verify.problems.map((p) => clean(p)).join('; '))));
    if (r) {
      lines.push(
        line('crate', clean(r.crate)),
        line('registry', clean(r.index)),
        line('latest', r.latest ? clean(r.latest, 40) : 'none installable'),
        line('versions', versionsLine(r.versions) || 'none'),
      );
      lines.push(
        `Install it with \`yep-ext install ${r.crate.startsWith('yolop-extension-') ? clean(r.crate.slice('yolop-extension-'.length)) : `crates.io:${clean(r.crate)}`}\` (add --dry-run to see what it contributes first).`,
      );
    }
    return lines.join('\n');
  }
  const lines = [bold(`${clean(info.name)}${info.version ? ` ${clean(info.version, 40)}` : ''}`)];
  if (info.description) lines.push(clean(info.description));
  lines.push(line('source', info.source_text ? clean(info.source_text) : '-'));
  if (info.pin) lines.push(line('pinned', clean(info.pin, 80)));
  lines.push(line('content hash', info.content_hash ?? '-'));
  lines.push(line('enabled', info.enabled === null ? 'unknown' : info.enabled ? 'yes' : 'no'));
  if (info.dir) lines.push(line('directory', clean(info.dir)));
  if (info.grant) {
    // A format-1 fingerprint (before the grant held the words the model reads) approves the same grant over the locked bytes.
    const how = approvalOf(info.approved_grant ?? undefined, info.grant.grant);
    const approved =
      info.approved_grant === null
        ? 'none on record'
        : how === 'exact'
          ? 'approved'
          : how === 'before-text' && info.verify?.ok === true
            ? 'approved; the words the model reads are recorded by the next install or update'
            : `differs from the approved ${info.approved_grant}`;
    lines.push(line('grant', `${info.grant.fingerprint} (${approved})`));
  }
  if (info.engines && info.engines.status !== 'none')
    lines.push(
      line(
        'engines',
        `${clean(info.engines.detail)}${info.engines.status === 'excludes' ? yellow(' (yolop cannot run it)') : info.engines.status === 'admits' ? ' (ok)' : ''}`,
      ),
    );
  if (info.upstream) {
    const u = info.upstream;
    const outside = u.newer_outside ? outsideText(u.newer_outside) : undefined;
    const status =
      u.status === 'update'
        ? yellow(`update available: ${updateCommand(info.name)}`)
        : u.status === 'beyond' && outside
          ? yellow(outside)
          : u.status === 'damaged'
            ? yellow(`damaged: what is installed is not what the lock pins (see checks); repair it with \`${u.hint}\``)
            : green('up to date');
    // A git tag is read as the tag, not as the commit it names.
    const pin = (p: string | null): string => (p === null ? '-' : u.tag !== null && p === u.wanted ? clean(u.tag, 40) : clean(p, 40));
    lines.push(line('upstream', `wanted ${pin(u.wanted)}, latest ${pin(u.latest)}: ${status}`));
    if (outside && u.status !== 'beyond') lines.push(line('', outside));
    if (u.versions.length > 0) lines.push(line('versions', versionsLine(u.versions)));
  } else if (info.upstream_error) {
    lines.push(line('upstream', yellow(`not checked: ${clean(info.upstream_error.message)}`)));
  } else if (info.source && isLinked(info.source)) {
    lines.push(line('upstream', 'local (a path install: edited in place)'));
  }
  if (info.config.length > 0) {
    lines.push('config:');
    for (const f of info.config) {
      const state = f.set ? SOURCE_TEXT[f.source] : f.source === 'default' ? `unset (default ${clean(JSON.stringify(f.default) ?? '', 80)})` : 'unset';
      lines.push(`  ${clean(f.key)}${f.secret ? ' (secret)' : ''}${f.required ? ' (required)' : ''}: ${state}${f.env ? ` -> $${clean(f.env)}` : ''}`);
    }
  }
  if (info.verify) lines.push(line('checks', info.verify.ok ? green('no problems found') : yellow(info.verify.problems.map((p) => clean(p)).join('; '))));
  // The fingerprint is on the `grant` line above: once is enough.
  if (info.grant) lines.push('', ...renderSummary(info.grant.grant, { fingerprint: false }));
  return lines.join('\n');
}
