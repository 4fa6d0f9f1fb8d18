import { Args, Flags } from '@oclif/core';
import { BaseCommand, checkMinAge, feedbackFlags, indexFlag, minAgeFlag } from '../cli/base-command.js';
import { confirmOrCancel } from '../cli/prompts.js';
import { acceptMismatch, parseAccept } from '../cli/accept-flag.js';
import { renderOutcome, renderPlan, renderPreview } from '../cli/render-install.js';
import { YepError, isYepError } from '../core/errors.js';
import type { Context } from '../core/context.js';
import { installMany, planMany, type InstallOutcome, type InstallPlan } from '../core/operations/install.js';
import { grantOf } from '../core/package/grants.js';
import { sanitize } from '../core/text/sanitize.js';
import { installFrozen, type FrozenItem } from '../core/operations/frozen.js';
import { buildModeOf } from '../core/binary/cargo-build.js';
import { GIT_MIRROR_ENV } from '../core/sources/mirror/git-mirror-url.js';
import type { CooldownOptions } from '../core/sources/crates-io/cooldown-options.js';

/** --quiet / --verbose, handed to the context. */
interface Feedback {
  quiet: boolean;
  verbose: boolean;
}

export default class Install extends BaseCommand {
  static override summary = 'Install extensions from crates.io, git or a local directory.';
  static override description = `Prints each package's contribution summary (server command, tools, hooks, MCP servers, prompt, commands) before placing it, verifies every download, and pins the result in extensions.lock. Install never enables: run \`yep-ext enable <name>\` afterwards.

Sources:
  lsp                             crate yolop-extension-lsp, latest stable
  lsp@0.3.1 / 'lsp@^0.3'          exact version / cargo requirement
  crates.io:<crate>[@req]         any crate name
  https://host/org/repo.git[@rev] git, pinned to the resolved commit (#ref for refs with "/")
  ./dir, ../dir, /abs, ~/dir      a local package, referenced in place`;

  static override examples = [
    '<%= config.bin %> install lsp',
    "<%= config.bin %> install 'lsp@^0.3' crates.io:yolop-extension-logfire@1.2.0",
    '<%= config.bin %> install lsp --no-build',
    '<%= config.bin %> install https://github.com/acme/yolop-ext.git@v1.2.0',
    '<%= config.bin %> install ./examples/echo-node',
    "<%= config.bin %> install 'lsp@^0.4' --dry-run",
    '<%= config.bin %> install lsp --min-age 3d',
    "<%= config.bin %> install 'lsp@^0.4' --dry-run --json",
    '<%= config.bin %> install --force lsp',
    '<%= config.bin %> install lsp@0.5.0 --ignore-engines',
    '<%= config.bin %> install --frozen --lockfile ./yolop-extensions.lock --enable',
  ];

  static override strict = false;
  static override args = {
    sources: Args.string({ ignoreStdin: true, description: 'What to install (repeatable): a name, crates.io:<crate>[@req], a git URL, or a path.' }),
  };

  static override flags = {
    ...indexFlag,
    ...feedbackFlags,
    ...minAgeFlag,
    'allow-fresh': Flags.boolean({ description: 'Install an exactly named version even when it is younger than --min-age / YEP_EXT_MIN_AGE (never below the policy file\'s min_age).' }),
    yes: Flags.boolean({ char: 'y', description: 'Replace an installed extension of the same name, and accept a wider grant, without asking.' }),
    accept: Flags.string({ multiple: true, multipleNonGreedy: true, description: 'When reinstalling widens the grant: accept exactly this new grant fingerprint (repeatable).' }),
    force: Flags.boolean({
      description: 'Fetch again and replace even when the lock says it is installed (repair after `yep-ext verify`): a name is fetched at exactly its locked version or commit and must match the lock; a path install is re-read and re-pinned.',
      exclusive: ['frozen', 'dry-run'],
    }),
    frozen: Flags.boolean({ description: 'Install exactly what a lockfile pins (no resolution); fail if anything differs. For CI provisioning.' }),
    enable: Flags.boolean({ description: 'With --frozen: enable every locked extension (required config still missing is reported, exit 10).', dependsOn: ['frozen'] }),
    lockfile: Flags.string({ description: 'With --frozen: the lockfile to install from (default: the store\'s own extensions.lock).', dependsOn: ['frozen'] }),
    'git-mirror': Flags.string({
      description: 'Fetch git sources (and resolve their branches and tags) from this mirror instead of their origin: the git/ root of a `yep-ext mirror` tree or any server laid out the same way (also YEP_EXT_GIT_MIRROR). The lock keeps the origin URLs. See docs/fleet.md.',
      helpValue: '<url>',
    }),
    'ignore-engines': Flags.boolean({
      description: "Install the newest version even when its engines.yolop excludes the installed yolop (also enables such packages with --frozen --enable). Without it, install picks the newest version your yolop can run, and refuses an exact version it cannot.",
    }),
    build: Flags.boolean({
      allowNo: true,
      description: 'Build the server binary from the crate with cargo even when a prebuilt one exists (--build), or never build it (--no-build: package only). Default: build only when no prebuilt binary fits this host and cargo is on PATH.',
    }),
    'dry-run': Flags.boolean({
      description: 'Fetch and verify, then print the plan (new, unchanged, re-pinned or replaced; the grant diff; whether consent is needed) without changing anything.',
      exclusive: ['frozen'],
    }),
  };

  private async runFrozen(lockfile: string | undefined, index: string | undefined, enable: boolean, ignoreEngines: boolean, feedback: Feedback, gitMirror: string | undefined): Promise<unknown> {
    const ctx = this.makeContext({ index, ...feedback });
    if (gitMirror !== undefined) ctx.env = { ...ctx.env, [GIT_MIRROR_ENV]: gitMirror };
    const json = this.jsonEnabled();
    const items = await installFrozen(ctx, {
      ...(lockfile ? { lockfile } : {}),
      onItem: (item) => {
        if (!json) this.logToStderr(frozenLine(item));
      },
    });
    if (!json) this.log(`${items.filter((i) => i.status === 'installed').length} installed, ${items.filter((i) => i.status === 'skipped').length} already as locked.`);
    if (!enable) return { frozen: items.map(frozenJson), enabled: null };
    const enabled = await enableAll(ctx, items.map((i) => i.name), ignoreEngines);
    if (!json) for (const e of enabled) this.logToStderr(e.ok ? `✔ ${e.name} enabled` : `! ${e.name}: ${e.error.message}`);
    const incomplete = enabled.filter((e) => !e.ok);
    if (incomplete.length > 0) {
      throw new YepError(incomplete.every((e) => !e.ok && e.error.code === 'E_SETUP_INCOMPLETE') ? 'E_SETUP_INCOMPLETE' : 'E_PARTIAL', `${incomplete.map((e) => e.name).join(', ')}: not fully set up.`, {
        hint: incomplete.flatMap((e) => (e.ok ? [] : [e.error.hint ?? ''])).join('\n'),
        details: { frozen: items.map(frozenJson), enabled: enabled.map((e) => (e.ok ? { name: e.name, ok: true, error: null } : { name: e.name, ok: false, error: e.error.toJSON() })) },
      });
    }
    return { frozen: items.map(frozenJson), enabled: enabled.map((e) => ({ name: e.name, ok: true, error: null })) };
  }

  async run(): Promise<unknown> {
    const { argv, flags } = await this.parse(Install);
    const specs = argv as string[];
    const feedback: Feedback = { quiet: flags.quiet, verbose: flags.verbose };
    if (flags.frozen) {
      if (specs.length > 0) throw new YepError('E_USAGE', '--frozen installs what the lockfile pins; it takes no sources.', { hint: 'Drop the sources, or drop --frozen.' });
      return this.runFrozen(flags.lockfile, flags.index, flags.enable, flags['ignore-engines'], feedback, flags['git-mirror']);
    }
    if (specs.length === 0) throw new YepError('E_USAGE', 'Nothing to install.', { hint: 'Give a source, e.g. `yep-ext install lsp` or `yep-ext install ./my-ext`.' });
    const accept = parseAccept(flags.accept);
    checkMinAge(flags['min-age']);
    const cooldown = { ...(flags['min-age'] !== undefined ? { minAge: flags['min-age'] } : {}), allowFresh: flags['allow-fresh'] };
    if (flags['dry-run']) return this.runDryRun(specs, flags.index, cooldown, flags['ignore-engines'], feedback, flags['git-mirror']);
    const ctx = this.makeContext({ index: flags.index, yes: flags.yes, ...feedback });
    if (flags['git-mirror'] !== undefined) ctx.env = { ...ctx.env, [GIT_MIRROR_ENV]: flags['git-mirror'] };
    ctx.cooldown = cooldown;
    const json = this.jsonEnabled();
    const results = await installMany(ctx, specs, {
      ignoreEngines: flags['ignore-engines'],
      prepare: { build: buildModeOf(flags.build) },
      ...(flags.force ? { force: true } : {}),
      // Without a TTY and without --yes a replacement cannot be approved: refused before any download.
      refuseReplace: !flags.yes && !ctx.interactive,
      onPreview: (p) => {
        if (!json) this.log(renderPreview(p));
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
        return confirmOrCancel(`${p.manifest.name} asks for more than you approved (see the changes above). Install it?`);
      },
      confirmReplace: async (_p, why) => {
        if (flags.yes) return true;
        if (!ctx.interactive) return false;
        return confirmOrCancel(`${why}. Replace it?`);
      },
    });
    const installed = results.filter((r) => r.ok).map((r) => summarize(r.outcome));
    const failed = results.flatMap((r) => (r.ok ? [] : [{ spec: r.spec, error: r.error.toJSON() }]));
    if (!json) for (const r of results) if (r.ok) this.log(renderOutcome(r.outcome));
    if (failed.length === 0) return { installed };
    if (results.length === 1 && !results[0]!.ok) throw results[0]!.error;
    if (!json) for (const r of results) if (!r.ok) this.logToStderr(failureLine(r.spec, r.error));
    const none = installed.length === 0;
    throw new YepError('E_PARTIAL', none ? `All ${results.length} installs failed; nothing was installed.` : `${failed.length} of ${results.length} installs failed.`, {
      details: { installed, failed },
      hint: none ? 'See each error above.' : 'The others were installed; fix the failures and run again.',
    });
  }

  /** `--dry-run`: the same fetch, verification and decision as an install, printed; nothing changes. */
  private async runDryRun(specs: string[], index: string | undefined, cooldown: CooldownOptions, ignoreEngines: boolean, feedback: Feedback, gitMirror: string | undefined): Promise<unknown> {
    const ctx = this.makeContext({ index, ...feedback });
    if (gitMirror !== undefined) ctx.env = { ...ctx.env, [GIT_MIRROR_ENV]: gitMirror };
    ctx.cooldown = cooldown;
    const json = this.jsonEnabled();
    const results = await planMany(ctx, specs, {
      ignoreEngines,
      onPreview: (p) => {
        if (!json) this.log(renderPreview(p));
      },
    });
    const plan = results.flatMap((r) => (r.ok ? [planJson(r.plan)] : []));
    const failed = results.flatMap((r) => (r.ok ? [] : [{ spec: r.spec, error: r.error.toJSON() }]));
    if (!json) for (const r of results) if (r.ok) this.log(renderPlan(r.plan));
    if (failed.length === 0) return { plan };
    if (results.length === 1 && !results[0]!.ok) throw results[0]!.error;
    if (!json) for (const r of results) if (!r.ok) this.logToStderr(failureLine(r.spec, r.error));
    throw new YepError('E_PARTIAL', `${failed.length} of ${results.length} sources could not be planned; nothing was changed.`, {
      details: { plan, failed },
      hint: 'See each error above.',
    });
  }
}

function failureLine(spec: string, error: YepError): string {
  return `✖ ${sanitize(spec)}: ${sanitize(error.message, { keepNewlines: true })}${error.hint ? `\n  hint: ${sanitize(error.hint, { keepNewlines: true })}` : ''}`;
}

/** Enable each name; setup problems are collected, not thrown, so provisioning reports them all. */
async function enableAll(ctx: Context, names: string[], ignoreEngines: boolean): Promise<Array<{ name: string; ok: true } | { name: string; ok: false; error: YepError }>> {
  const out: Array<{ name: string; ok: true } | { name: string; ok: false; error: YepError }> = [];
  // Loaded here, not at the top: enable brings ajv (~260 KB), which a plain install never needs.
  const { runEnable } = await import('../core/operations/enable.js');
  for (const name of names) {
    try {
      await runEnable(ctx, name, { ignoreEngines });
      out.push({ name, ok: true });
    } catch (e) {
      if (!isYepError(e)) throw e;
      out.push({ name, ok: false, error: e });
    }
  }
  return out;
}

function frozenLine(item: FrozenItem): string {
  return item.status === 'failed' ? `✖ ${item.name}: ${item.reason}` : item.status === 'skipped' ? `= ${item.name} (already as locked)` : `✔ ${item.name} verified`;
}

/** A frozen item for --json: every key present, null when it does not apply (docs/json.md). */
function frozenJson(item: FrozenItem) {
  return { name: item.name, status: item.status, reason: item.reason ?? null, engines: item.engines ?? null };
}

/** A plan for --json: every key present, null when it does not apply (docs/json.md). */
function planJson(p: InstallPlan) {
  return { ...p, version: p.version ?? null, previous: p.previous ?? null, diff: p.diff ?? null, replace_reason: p.replace_reason ?? null };
}

function summarize(o: InstallOutcome) {
  return { name: o.name, version: o.version ?? null, status: o.status, source: o.source, content_hash: o.content_hash, grant: o.grant, contributions: grantOf(o.manifest), command: o.command, notes: o.notes, engines: o.engines };
}
