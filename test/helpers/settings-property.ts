/**
 * Shared driver of the settings property tests (test/integration/settings-property.test.ts
 * runs it in-process over 200+ files, test/cli/settings-property-cli.test.ts through
 * the built CLI over a subset): a seeded sequence of commands per generated file,
 * and the checks after each command against the independent model in settings-model.ts.
 */
import {
  Gen,
  configWhenEnabled,
  hostInstances,
  hostRuns,
  keptConfig,
  othersUntouched,
  sortKeys,
  subjectEntries,
  withoutSubject,
  DECLARED_KEYS,
  type GeneratedFile,
} from './settings-model.js';
import { prng } from './prng.js';

export const SUBJECT = 'alpha';

export type Op =
  | { kind: 'enable' }
  /** `--config key=raw`, and the value the schema types it to. */
  | { kind: 'enable-config'; key: string; raw: string; typed: unknown }
  | { kind: 'disable' }
  | { kind: 'list' }
  /** What the host's own enable does to a disabled extension: append a bare entry. */
  | { kind: 'host-enable' }
  | { kind: 'remove' };

const ENDPOINTS = ['https://e.example/x', 'quote " back \\ slash', "it's # not a comment", 'café ✓', 'a=b=c', ''];

/** 2-6 commands in a seeded order, always ending with remove. */
export function opsFor(seed: number): Op[] {
  const g = new Gen(prng(seed ^ 0x5eed));
  const ops: Op[] = [];
  for (let i = g.int(2, 6); i > 0; i--) {
    switch (g.int(0, 4)) {
      case 0:
        ops.push({ kind: 'enable' });
        break;
      case 1: {
        if (g.chance(0.5)) {
          const port = g.int(1, 65535);
          ops.push({ kind: 'enable-config', key: 'port', raw: String(port), typed: port });
        } else {
          const endpoint = g.pick(ENDPOINTS);
          ops.push({ kind: 'enable-config', key: 'endpoint', raw: endpoint, typed: endpoint });
        }
        break;
      }
      case 2:
        ops.push({ kind: 'disable' });
        break;
      case 3:
        ops.push({ kind: 'host-enable' });
        break;
      default:
        ops.push({ kind: 'list' });
    }
  }
  ops.push({ kind: 'remove' });
  return ops;
}

/**
 * The host's own enable (`SettingsStore::set_capability_enabled`, host-compat §5): it
 * appends a bare `{ ref }` entry unless a non-removing entry for the ref exists,
 * whatever that leaves the host reading (an entry before a later `enabled = false`
 * counts), and leaves older `enabled = false` entries in place.
 */
export function hostEnable(text: string): string {
  if (subjectEntries(text, SUBJECT).some((e) => e.enabled !== false)) return text;
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const sep = text === '' || text.endsWith('\n') ? '' : eol;
  return `${text}${sep}${eol}[[capabilities]]${eol}ref = "ext:${SUBJECT}"${eol}`;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
const show = (v: unknown): string => JSON.stringify(sortKeys(v));

/**
 * Keys of the subject's entries that a command lost: entries are never deleted nor
 * reordered (new ones only at the end), and every key an entry had is still there
 * with its value, except `enabled` and the keys in `changing`.
 */
function lostKeys(before: string, after: string, changing: readonly string[]): string[] {
  const was = subjectEntries(before, SUBJECT);
  const now = subjectEntries(after, SUBJECT);
  const out: string[] = [];
  if (now.length < was.length) out.push(`${was.length - now.length} of the subject's entries were deleted`);
  was.forEach((entry, i) => {
    const next = now[i] ?? {};
    for (const [k, v] of Object.entries(entry)) {
      if (k === 'enabled' || changing.includes(k)) continue;
      if (!(k in next)) out.push(`entry ${i + 1} lost ${k}`);
      else if (!same(next[k], v)) out.push(`entry ${i + 1} changed ${k}: ${show(v)} -> ${show(next[k])}`);
    }
  });
  return out;
}

/**
 * What the last texts parse to outside the subject's entries, as show() spells it: a
 * command's checks and those of the list after it read the same before and after texts
 * again and again. A function of the text alone, so kept by it.
 */
const outsideSubjects = new Map<string, string>();
const RECENT_TEXTS = 8;
function outsideSubject(text: string): string {
  let shown = outsideSubjects.get(text);
  if (shown === undefined) {
    shown = show(withoutSubject(text, SUBJECT));
    if (outsideSubjects.size >= RECENT_TEXTS) outsideSubjects.delete(outsideSubjects.keys().next().value as string);
    outsideSubjects.set(text, shown);
  }
  return shown;
}

/** othersUntouched of the last file and text asked: the list after a command checks the same text of the same file. */
let lastUntouched: { file: GeneratedFile; after: string; found: string | undefined } | undefined;
function untouchedCheck(file: GeneratedFile, after: string): string | undefined {
  if (lastUntouched?.file !== file || lastUntouched.after !== after) lastUntouched = { file, after, found: othersUntouched(file, after, SUBJECT) };
  return lastUntouched.found;
}

/**
 * Disagreements between what a command did/reported and the in-order reading of
 * the file before and after it. `report` is the command's --json document (for
 * list: the subject's item of `list --json`). Empty when all is well.
 */
export function disagreements(file: GeneratedFile, op: Op, before: string, after: string, report: any): string[] {
  const out: string[] = [];
  const untouched = untouchedCheck(file, after);
  if (untouched) out.push(`bytes outside ext:${SUBJECT} changed: ${untouched}`);
  if (outsideSubject(before) !== outsideSubject(after)) out.push('the parsed document outside ext:alpha changed');
  const runs = hostRuns(after, SUBJECT);
  switch (op.kind) {
    case 'enable':
    case 'enable-config': {
      const want = { ...configWhenEnabled(before, SUBJECT), ...(op.kind === 'enable-config' ? { [op.key]: op.typed } : {}) };
      if (!runs.enabled) out.push('host reads it disabled after enable');
      if (!same(runs.config, want)) out.push(`host config after enable ${show(runs.config)}, want ${show(want)}`);
      out.push(...lostKeys(before, after, op.kind === 'enable-config' ? [op.key] : []));
      if (report?.enabled !== true) out.push(`enable reported enabled=${report?.enabled}`);
      if (report?.was_enabled !== hostRuns(before, SUBJECT).enabled)
        out.push(`enable reported was_enabled=${report?.was_enabled}, the host read ${hostRuns(before, SUBJECT).enabled}`);
      break;
    }
    case 'disable': {
      if (!hostRuns(before, SUBJECT).enabled) {
        if (after !== before) out.push('disable of an extension the host does not run changed the file');
      } else {
        if (runs.enabled) out.push('host reads it enabled after disable');
        out.push(...lostKeys(before, after, []));
        // Enable after it gives back what the host ran before it (the round trip), not more.
        if (!same(configWhenEnabled(after, SUBJECT), hostRuns(before, SUBJECT).config))
          out.push(
            `enable after disable would bring back ${show(configWhenEnabled(after, SUBJECT))}, the host ran ${show(hostRuns(before, SUBJECT).config)} before`,
          );
      }
      if (report?.enabled !== false) out.push(`disable reported enabled=${report?.enabled}`);
      break;
    }
    case 'remove':
      if (subjectEntries(after, SUBJECT).length !== 0) out.push(`${subjectEntries(after, SUBJECT).length} entries left after remove`);
      break;
    case 'list':
      out.push(...listDisagreements(after, report));
      break;
    case 'host-enable':
      break;
  }
  return out;
}

/**
 * A switch and its inverse (disable then enable from an enabled extension, enable then
 * disable from a disabled one) give the file back: byte for byte, except that an
 * `enabled` line the user wrote on the entry the first command switched may come back
 * as yep-ext writes it (its value `true`/`false`, or gone where it said `true`), and
 * except an entry the first command had to add. Whatever the bytes, the host's reading
 * (every instance and its config) is the one before, and no key of the subject's
 * entries is lost. `middle` and `after` are the texts after each command.
 */
export function roundTripDisagreements(before: string, middle: string, after: string): string[] {
  const out: string[] = [];
  const wasEnabled = hostRuns(before, SUBJECT).enabled;
  const first = wasEnabled ? 'disable' : 'enable';
  if (hostRuns(middle, SUBJECT).enabled === wasEnabled) out.push(`${first} did not switch it`);
  if (!same(hostInstances(after, SUBJECT), hostInstances(before, SUBJECT)))
    out.push(`the host reads ${show(hostInstances(after, SUBJECT))} after the round trip, ${show(hostInstances(before, SUBJECT))} before`);
  out.push(...lostKeys(before, after, []));
  const entries = subjectEntries(before, SUBJECT);
  const last = entries[entries.length - 1];
  // Byte for byte when the switched entry said nothing of `enabled` (disable) or said `enabled = false` (enable).
  const exact = wasEnabled ? last !== undefined && !('enabled' in last) : last?.enabled === false;
  if (exact && after !== before) out.push(`the round trip changed the bytes: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);
  if (!exact && wasEnabled) {
    // Line by line, the only difference allowed is the switched entry's `enabled` line.
    const a = before.split('\n');
    const b = after.split('\n');
    const diff = a.filter((l) => !b.includes(l));
    const added = b.filter((l) => !a.includes(l));
    if (diff.length > 1 || !diff.every((l) => /^\s*enabled\s*=/.test(l)) || !added.every((l) => /^\s*enabled\s*=\s*true\b/.test(l)))
      out.push(`the round trip changed more than the enabled line: -${show(diff)} +${show(added)}`);
  }
  return out;
}

/** `list --json`'s item for the subject against the in-order reading of `text`. */
function listDisagreements(text: string, item: any): string[] {
  const out: string[] = [];
  if (!item) return ['the subject is missing from list --json'];
  const runs = hostRuns(text, SUBJECT);
  const kept = keptConfig(text, SUBJECT);
  if (item.enabled !== runs.enabled) out.push(`list says enabled=${item.enabled}, the host reads ${runs.enabled}`);
  const fields = new Map<string, any>((item.config ?? []).map((f: any) => [f.key, f]));
  for (const key of DECLARED_KEYS) {
    const f = fields.get(key);
    if (!f) {
      out.push(`list --json has no status for ${key}`);
      continue;
    }
    const set = key in runs.config;
    if (f.set !== set) out.push(`list says ${key} set=${f.set}, the host ${set ? 'passes' : 'does not pass'} it`);
    if (f.source !== (set ? 'settings' : 'unset')) out.push(`list says ${key} source=${f.source}`);
    const isKept = !set && key in kept;
    if ((f.kept === true) !== isKept) out.push(`list says ${key} kept=${f.kept}, want ${isKept}`);
  }
  const notice = (item.problems as string[]).some((p) => p.startsWith('config not in effect'));
  const wantNotice = runs.enabled && Object.keys(kept).length > 0;
  if (notice !== wantNotice) out.push(`list ${notice ? 'reports' : 'does not report'} config not in effect; want ${wantNotice}`);
  return out;
}
