/**
 * The body of `yep-ext install` (src/commands/install.ts), after its arguments are
 * parsed. Output goes through a CommandIo; the returned value is the --json document.
 */
import { confirmOrCancel } from './prompts.js';
import { acceptMismatch, parseAccept } from './accept-flag.js';
import { renderOutcome, renderPlan, renderPreview } from './render-install.js';
import type { CommandIo } from './command.js';
import { interruptedRun } from './interrupted.js';
import { YepError, isYepError } from '../core/errors.js';
import type { Context } from '../core/context.js';
import { installMany, planMany, readSpec, type InstallOutcome, type InstallPlan } from '../core/operations/install.js';
import { homeDir } from '../core/paths.js';
import { grantOf } from '../core/package/grants.js';
import { sanitize } from '../core/text/sanitize.js';
import { loadSettingsText, settingsLookup } from '../core/settings/settings.js';

/** The parsed flags of `install` (src/commands/install.ts declares them). */
export interface InstallFlags {
  index?: string | undefined;
  quiet?: boolean | undefined;
  verbose?: boolean | undefined;
  'min-age'?: string | undefined;
  'allow-fresh': boolean;
  yes: boolean;
  accept?: string[] | undefined;
  force: boolean;
  frozen: boolean;
  enable: boolean;
  lockfile?: string | undefined;
  'git-mirror'?: string | undefined;
  'ignore-engines': boolean;
  build?: boolean | undefined;
  'allow-build'?: boolean | undefined;
  'dry-run': boolean;
  timeout?: string | undefined;
}

/** `install` without --frozen (src/commands/install.ts sends --frozen to frozen-run.ts). */
export async function runInstall(io: CommandIo, flags: InstallFlags, specs: string[]): Promise<unknown> {
  if (specs.length === 0)
    throw new YepError('E_USAGE', 'Nothing to install.', { hint: 'Give a source, e.g. `yep-ext install lsp` or `yep-ext install ./my-ext`.' });
  // A source whose text cannot be read is a usage mistake of the whole command (as cargo and
  // npm treat it): refused before anything of the others is fetched or installed. (--force
  // takes installed names too, which need not be crate names: its own path reads them.)
  const { cwd, env } = io.io;
  if (!flags.force) for (const spec of specs) readSpec(spec, cwd, homeDir(env));
  const accept = parseAccept(flags.accept);
  if (flags['dry-run']) return runDryRun(io, specs, flags['ignore-engines']);
  const ctx = io.context();
  const json = io.json;
  const results = await installMany(
    ctx,
    specs,
    {
      ignoreEngines: flags['ignore-engines'],
      ...(flags.force ? { force: true } : {}),
      // Without a TTY and without --yes a replacement cannot be approved: refused before any download.
      refuseReplace: !flags.yes && !ctx.interactive,
      // -q: the summary only when it is what consent is asked for (a widened grant: "the changes above").
      onPreview: (p) => {
        if (!json && (!flags.quiet || p.diff?.widens === true)) io.log(renderPreview(p));
      },
      confirmWiden: async (p) => {
        if (flags.yes || accept.includes(p.grant.fingerprint)) return true;
        const mismatch = acceptMismatch(accept, p.grant.fingerprint);
        if (mismatch) {
          throw new YepError('E_CONSENT_REQUIRED', `${p.manifest.name}: ${mismatch}; nothing was changed.`, {
            hint: `Review the changes above, then re-run with --accept ${p.grant.fingerprint} (exactly this grant) or --yes.`,
          });
        }
        if (!ctx.interactive) return false;
        return confirmOrCancel(io.io, `${p.manifest.name} asks for more than you approved (see the changes above). Install it?`);
      },
      confirmReplace: async (_p, why) => {
        if (flags.yes) return true;
        if (!ctx.interactive) return false;
        return confirmOrCancel(io.io, `${why}. Replace it?`);
      },
    },
    cwd,
  );
  const enabled = await hostEnabledReader(ctx);
  const installed = results.filter((r) => r.ok).map((r) => summarize(r.outcome, enabled(r.outcome.name)));
  const failed = results.flatMap((r) => (r.ok ? [] : [{ spec: r.spec, error: r.error.toJSON() }]));
  if (!json) for (const r of results) if (r.ok) io.log(renderOutcome(r.outcome, enabled(r.outcome.name), flags.quiet));
  const stopped = interruptedRun(
    ctx.signal,
    'installed',
    installed.map((i) => i.name),
    results.flatMap((r) => (r.ok ? [] : [r.spec])),
  );
  if (stopped) throw stopped;
  if (failed.length === 0) return { installed };
  if (results.length === 1 && !results[0]!.ok) throw results[0]!.error;
  if (!json) for (const r of results) if (!r.ok) io.logToStderr(failureLine(r.spec, r.error));
  const none = installed.length === 0;
  throw new YepError(
    'E_PARTIAL',
    none ? `All ${results.length} installs failed; nothing was installed.` : `${failed.length} of ${results.length} installs failed.`,
    {
      details: { installed, failed },
      hint: none ? 'See each error above.' : 'The others were installed; fix the failures and run again.',
    },
  );
}

/** `--dry-run`: the same fetch, verification and decision as an install, printed; nothing changes. */
async function runDryRun(io: CommandIo, specs: string[], ignoreEngines: boolean): Promise<unknown> {
  const ctx = io.context();
  const json = io.json;
  const results = await planMany(
    ctx,
    specs,
    {
      ignoreEngines,
      onPreview: (p) => {
        if (!json) io.log(renderPreview(p));
      },
    },
    io.io.cwd,
  );
  const plan = results.flatMap((r) => (r.ok ? [planJson(r.plan)] : []));
  if (ctx.signal.aborted)
    throw interruptedRun(
      ctx.signal,
      'installed',
      [],
      results.map((r) => r.spec),
    )!;
  const failed = results.flatMap((r) => (r.ok ? [] : [{ spec: r.spec, error: r.error.toJSON() }]));
  if (!json) for (const r of results) if (r.ok) io.log(renderPlan(r.plan));
  if (failed.length === 0) return { plan };
  if (results.length === 1 && !results[0]!.ok) throw results[0]!.error;
  if (!json) for (const r of results) if (!r.ok) io.logToStderr(failureLine(r.spec, r.error));
  throw new YepError('E_PARTIAL', `${failed.length} of ${results.length} sources could not be planned; nothing was changed.`, {
    details: { plan, failed },
    hint: 'See each error above.',
  });
}

function failureLine(spec: string, error: YepError): string {
  return `✖ ${sanitize(spec)}: ${sanitize(error.message, { keepNewlines: true })}${error.hint ? `\n  hint: ${sanitize(error.hint, { keepNewlines: true })}` : ''}`;
}

/** A plan for --json: every key present, null when it does not apply (docs/json.md). */
function planJson(p: InstallPlan) {
  return { ...p, version: p.version ?? null, previous: p.previous ?? null, diff: p.diff ?? null, replace_reason: p.replace_reason ?? null };
}

function summarize(o: InstallOutcome, enabled: boolean | null) {
  return {
    name: o.name,
    version: o.version ?? null,
    status: o.status,
    source: o.source,
    content_hash: o.content_hash,
    grant: o.grant,
    contributions: grantOf(o.manifest),
    command: o.command,
    notes: o.notes,
    engines: o.engines,
    enabled,
  };
}

/**
 * Whether yolop loads each installed name now, read from settings.toml after the
 * install (host-reading.ts): install never enables, but the file may already turn
 * the name on (an entry kept from an earlier install, or settings.toml copied with
 * dotfiles), and "Not enabled" would then be false. null when settings.toml cannot
 * be read (the install itself stands; `list` names that problem).
 */
async function hostEnabledReader(ctx: Context): Promise<(name: string) => boolean | null> {
  try {
    const lookup = settingsLookup(await loadSettingsText(ctx.paths), ctx.paths.settingsFile);
    return (name) => lookup(name).enabled;
  } catch (e) {
    if (!isYepError(e)) throw e;
    return () => null;
  }
}
