/** The body of `yep-ext update` (src/commands/update.ts), after its arguments are parsed. */
import { unlockedPackages } from '../core/store/unlocked-packages.js';
import { confirmOrCancel } from './prompts.js';
import { acceptMismatch, parseAccept } from './accept-flag.js';
import { renderPlanned, renderUpdated } from './render-update.js';
import type { CommandIo } from './command.js';
import { interruptedRun } from './interrupted.js';
import { YepError } from '../core/errors.js';
import { sanitize } from '../core/text/sanitize.js';
import { updateExtensions, type UpdateItem } from '../core/operations/update.js';

/** The parsed flags of `update` (src/commands/update.ts declares them). */
export interface UpdateFlags {
  index?: string | undefined;
  quiet?: boolean | undefined;
  verbose?: boolean | undefined;
  'min-age'?: string | undefined;
  all: boolean;
  'dry-run': boolean;
  yes: boolean;
  accept?: string[] | undefined;
  'ignore-engines': boolean;
  'git-mirror'?: string | undefined;
  build?: boolean | undefined;
  'allow-build'?: boolean | undefined;
  timeout?: string | undefined;
}

export async function runUpdate(io: CommandIo, flags: UpdateFlags, argv: string[]): Promise<unknown> {
  const accept = parseAccept(flags.accept);
  if (flags.all && argv.length > 0) {
    throw new YepError(
      'E_USAGE',
      `--all updates every installed extension; it takes no names (got ${argv.map((a) => JSON.stringify(sanitize(a, { max: 80 }))).join(', ')}).`,
      {
        hint: `Drop the names (\`yep-ext update\` updates every one), or drop --all (\`yep-ext update ${argv.map((a) => sanitize(a, { max: 80 })).join(' ')}\`).`,
      },
    );
  }
  const ctx = io.context();
  const json = io.json;
  const items = await updateExtensions(ctx, {
    names: argv,
    all: flags.all,
    dryRun: flags['dry-run'],
    yes: flags.yes,
    accept,
    ignoreEngines: flags['ignore-engines'],
    // A failure is reported once, on stderr, after the run (as install reports its failures): not also here.
    // -q: a plan line only where it says what consent is asked for, or why an update is held.
    onPlan: (item) => {
      if (json || item.status === 'failed') return;
      if (flags.quiet && !flags['dry-run'] && !item.consent_needed && item.status !== 'held') return;
      io.log(renderPlanned(item, Boolean(flags['dry-run'])));
    },
    ...(ctx.interactive
      ? { confirm: (item: UpdateItem) => confirmOrCancel(io.io, `${item.name} asks for more than you approved (see above). Apply this update?`) }
      : {}),
  });
  if (!json) for (const item of items) if (item.status === 'updated') io.log(renderUpdated(item));
  // Every extension (no names, or --all) over an empty store said nothing at all, which reads like a hang or a bug.
  // With nothing in the lock the store may still hold packages the host loads (placed by hand,
  // or a lock that lost them): "no extension is installed" would be false, so they are named.
  if (!json && argv.length === 0 && items.length === 0) {
    const unlocked = unlockedPackages(ctx.paths, new Set());
    io.log(
      unlocked.length === 0
        ? 'Nothing to update: no extension is installed.'
        : `Nothing to update: the lock pins no extension, but the store holds ${unlocked.length === 1 ? 'a package' : 'packages'} it does not pin (${unlocked.join(', ')}); \`yep-ext verify\` names ${unlocked.length === 1 ? 'it' : 'them'}.`,
    );
  }
  const stopped = interruptedRun(
    ctx.signal,
    'updated',
    items.filter((i) => i.status === 'updated').map((i) => i.name),
    items.filter((i) => i.status === 'failed' || i.status === 'would-update').map((i) => i.name),
  );
  if (stopped) throw stopped;
  const refused = items.filter((i) => i.status === 'refused');
  const failed = items.filter((i) => i.status === 'failed');
  // A lone failed update is the command's error; otherwise each failure is named here, once.
  const alone = failed.length === 1 && items.length === 1;
  if (!json && !alone) for (const f of failed) io.logToStderr(failureLine(f));
  if (refused.length > 0) {
    const mismatches = refused.flatMap((i) => {
      const m = i.to ? acceptMismatch(accept, i.to.grant) : undefined;
      return m ? [`${i.name}: ${m}`] : [];
    });
    const mismatch = mismatches.length > 0 ? ` (${mismatches.join('; ')})` : '';
    const why = refused.every((i) => i.first_approval) ? 'the update needs its grant approved (none is on record)' : 'the update widens the grant';
    throw new YepError(
      'E_CONSENT_REQUIRED',
      `${refused.map((i) => i.name).join(', ')}: ${why} and was not approved${mismatch}; nothing was changed for ${refused.length === 1 ? 'it' : 'them'}.`,
      {
        hint: `Review the diff, then re-run with ${refused.map((i) => `--accept ${i.to?.grant}`).join(' ')} (exactly this grant) or --yes.`,
        details: { updates: items.map(updateJson) },
      },
    );
  }
  if (alone) {
    const e = failed[0]!.error!;
    throw new YepError(e.code, e.message, { ...(e.hint ? { hint: e.hint } : {}), ...(e.details ? { details: e.details } : {}) });
  }
  if (failed.length > 0) {
    const none = failed.length === items.length;
    throw new YepError('E_PARTIAL', none ? `All ${items.length} updates failed; nothing was updated.` : `${failed.length} of ${items.length} updates failed.`, {
      hint: none
        ? 'See each error above.'
        : flags['dry-run']
          ? 'The others are planned above; fix the failures and run again.'
          : 'The others were updated or already up to date; fix the failures and run again.',
      details: { updates: items.map(updateJson) },
    });
  }
  return { updates: items.map(updateJson) };
}
/** A failed item on stderr: its error and hint, as install words a failed source. */
function failureLine(item: UpdateItem): string {
  const e = item.error;
  return `✖ ${sanitize(item.name)}: ${sanitize(e?.message ?? 'failed', { keepNewlines: true })}${e?.hint ? `\n  hint: ${sanitize(e.hint, { keepNewlines: true })}` : ''}`;
}

/** One item for --json: every key present, in this order, null when it does not apply (docs/json.md); keys yep-ext may add later come after. */
function updateJson(i: UpdateItem) {
  const { name, status, from, to, diff, first_approval, contributions, consent_needed, engines, binary, newer_outside, error, ...later } = i;
  return {
    name,
    status,
    from: { version: from.version ?? null, content_hash: from.content_hash, source: from.source, grant: from.grant ?? null },
    to: to ? { version: to.version ?? null, content_hash: to.content_hash, source: to.source, grant: to.grant } : null,
    diff: diff ?? null,
    first_approval: first_approval === true,
    contributions: contributions ?? null,
    consent_needed,
    engines: engines ?? null,
    binary: binary ?? null,
    newer_outside: newer_outside ?? null,
    error: error ?? null,
    ...later,
  };
}
