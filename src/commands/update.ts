import { Args, Flags } from '@oclif/core';
import { BaseCommand, checkMinAge, feedbackFlags, indexFlag, minAgeFlag } from '../cli/base-command.js';
import { confirmOrCancel } from '../cli/prompts.js';
import { acceptMismatch, parseAccept } from '../cli/accept-flag.js';
import { renderPlanned, renderUpdated } from '../cli/render-update.js';
import { YepError } from '../core/errors.js';
import { sanitize } from '../core/text/sanitize.js';
import { updateExtensions, type UpdateItem } from '../core/operations/update.js';
import { buildModeOf } from '../core/binary/cargo-build.js';
import { GIT_MIRROR_ENV } from '../core/sources/mirror/git-mirror-url.js';

export default class Update extends BaseCommand {
  static override summary = 'Update extensions from their recorded sources, asking again when the grant widens.';
  static override description = `Crates move to the highest version matching the requirement you installed with whose engines.yolop admits the installed yolop (newer ones that need a newer yolop are named and skipped; --ignore-engines takes the newest anyway); git installs move the ref you asked for to its new commit; path installs are re-read and re-pinned in place.

A hash-identical update is silent. An update that only narrows what the extension may do is applied and its diff shown. An update that widens the grant (new tools, hooks, MCP servers, commands, prompt, secrets, a changed server command) shows the contribution diff and asks; without a TTY it is refused with exit status 8 and nothing changes, unless --yes, or --accept with the exact fingerprint of the new grant (what a CI pipeline approves after review).`;

  static override aliases = ['upgrade'];
  static override examples = [
    '<%= config.bin %> update lsp',
    '<%= config.bin %> update --all --dry-run',
    '<%= config.bin %> update --all --min-age 3d',
    '<%= config.bin %> update --all --json',
    '<%= config.bin %> update lsp --accept sha256:3f1c…',
  ];

  static override strict = false;
  static override args = { names: Args.string({ ignoreStdin: true, description: 'Extensions to update (or --all).' }) };
  static override flags = {
    ...indexFlag,
    ...feedbackFlags,
    ...minAgeFlag,
    all: Flags.boolean({ description: 'Update every installed extension.' }),
    'dry-run': Flags.boolean({ description: 'Print the plan (from -> to, the diff, whether consent is needed) without writing.' }),
    yes: Flags.boolean({ char: 'y', description: 'Accept widened grants without asking.' }),
    accept: Flags.string({ multiple: true, multipleNonGreedy: true, description: 'Accept exactly this new grant fingerprint (repeatable); any other widening is refused.' }),
    'ignore-engines': Flags.boolean({ description: "Move to the newest version even when its engines.yolop excludes the installed yolop (by default update moves to the newest your yolop can run)." }),
    'git-mirror': Flags.string({
      description: 'Resolve and fetch git sources from this mirror instead of their origin (the git/ root of a `yep-ext mirror` tree or any server laid out the same way; also YEP_EXT_GIT_MIRROR). The lock keeps the origin URLs. See docs/fleet.md.',
      helpValue: '<url>',
    }),
    build: Flags.boolean({
      allowNo: true,
      description: 'Build the server binary from the crate with cargo even when a prebuilt one exists (--build), or never build it (--no-build: package only). Default: build only when no prebuilt binary fits this host and cargo is on PATH.',
    }),
  };

  async run(): Promise<unknown> {
    const { argv, flags } = await this.parse(Update);
    const accept = parseAccept(flags.accept);
    checkMinAge(flags['min-age']);
    if (flags.all && argv.length > 0) {
      throw new YepError('E_USAGE', `--all updates every installed extension; it takes no names (got ${(argv as string[]).map((a) => JSON.stringify(sanitize(a, { max: 80 }))).join(', ')}).`, {
        hint: `Drop the names (\`yep-ext update --all\`), or drop --all (\`yep-ext update ${(argv as string[]).map((a) => sanitize(a, { max: 80 })).join(' ')}\`).`,
      });
    }
    const ctx = this.makeContext({ index: flags.index, yes: flags.yes, quiet: flags.quiet, verbose: flags.verbose });
    if (flags['git-mirror'] !== undefined) ctx.env = { ...ctx.env, [GIT_MIRROR_ENV]: flags['git-mirror'] };
    if (flags['min-age'] !== undefined) ctx.cooldown = { minAge: flags['min-age'] };
    const json = this.jsonEnabled();
    const items = await updateExtensions(ctx, {
      names: argv as string[],
      all: flags.all,
      dryRun: flags['dry-run'],
      yes: flags.yes,
      accept,
      ignoreEngines: flags['ignore-engines'],
      prepare: { build: buildModeOf(flags.build) },
      onPlan: (item) => {
        if (!json) this.log(renderPlanned(item, Boolean(flags['dry-run'])));
      },
      ...(ctx.interactive ? { confirm: (item: UpdateItem) => confirmOrCancel(`${item.name} asks for more than you approved (see above). Apply this update?`) } : {}),
    });
    if (!json) for (const item of items) if (item.status === 'updated') this.log(renderUpdated(item));
    const refused = items.filter((i) => i.status === 'refused');
    const failed = items.filter((i) => i.status === 'failed');
    if (refused.length > 0) {
      const mismatches = refused.flatMap((i) => {
        const m = i.to ? acceptMismatch(accept, i.to.grant) : undefined;
        return m ? [`${i.name}: ${m}`] : [];
      });
      const mismatch = mismatches.length > 0 ? ` (${mismatches.join('; ')})` : '';
      const why = refused.every((i) => i.first_approval) ? 'the update needs its grant approved (none is on record)' : 'the update widens the grant';
      throw new YepError('E_CONSENT_REQUIRED', `${refused.map((i) => i.name).join(', ')}: ${why} and was not approved${mismatch}; nothing was changed for ${refused.length === 1 ? 'it' : 'them'}.`, {
        hint: `Review the diff, then re-run with ${refused.map((i) => `--accept ${i.to?.grant}`).join(' ')} (exactly this grant) or --yes.`,
        details: { updates: items.map(updateJson) },
      });
    }
    if (failed.length === 1 && items.length === 1) {
      const e = failed[0]!.error!;
      throw new YepError(e.code, e.message, { ...(e.hint ? { hint: e.hint } : {}), ...(e.details ? { details: e.details } : {}) });
    }
    if (failed.length > 0) {
      if (!json) for (const f of failed) this.logToStderr(`✖ ${f.name}: ${f.error?.message}`);
      throw new YepError('E_PARTIAL', `${failed.length} of ${items.length} updates failed.`, { details: { updates: items.map(updateJson) } });
    }
    return { updates: items.map(updateJson) };
  }
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
