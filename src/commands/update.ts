import { Args, Flags } from '@oclif/core';
import { BaseCommand, indexFlag, minAgeFlag } from '../cli/base-command.js';
import { confirm } from '../cli/prompts.js';
import { renderDiff } from '../cli/render-grant.js';
import { bold, green, yellow } from '../cli/style.js';
import { YepError } from '../core/errors.js';
import { describeSource } from '../core/sources/index.js';
import { updateExtensions, type UpdateItem } from '../core/operations/update.js';
import { sanitize } from '../core/text/sanitize.js';
import { buildModeOf } from '../core/binary/cargo-build.js';

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
    ...minAgeFlag,
    all: Flags.boolean({ description: 'Update every installed extension.' }),
    'dry-run': Flags.boolean({ description: 'Print the plan (from -> to, the diff, whether consent is needed) without writing.' }),
    yes: Flags.boolean({ char: 'y', description: 'Accept widened grants without asking.' }),
    accept: Flags.string({ multiple: true, description: 'Accept exactly this new grant fingerprint (repeatable); any other widening is refused.' }),
    'ignore-engines': Flags.boolean({ description: "Move to the newest version even when its engines.yolop excludes the installed yolop (by default update moves to the newest your yolop can run)." }),
    build: Flags.boolean({
      allowNo: true,
      description: 'Build the server binary from the crate with cargo even when a prebuilt one exists (--build), or never build it (--no-build: package only). Default: build only when no prebuilt binary fits this host and cargo is on PATH.',
    }),
  };

  async run(): Promise<unknown> {
    const { argv, flags } = await this.parse(Update);
    const ctx = this.makeContext({ index: flags.index, yes: flags.yes });
    if (flags['min-age'] !== undefined) ctx.cooldown = { minAge: flags['min-age'] };
    const json = this.jsonEnabled();
    const items = await updateExtensions(ctx, {
      names: argv as string[],
      all: flags.all,
      dryRun: flags['dry-run'],
      yes: flags.yes,
      accept: flags.accept ?? [],
      ignoreEngines: flags['ignore-engines'],
      prepare: { build: buildModeOf(flags.build) },
      onPlan: (item) => {
        if (!json) this.log(renderPlanned(item, Boolean(flags['dry-run'])));
      },
      ...(ctx.interactive ? { confirm: (item: UpdateItem) => confirm(`${item.name} asks for more than you approved (see above). Apply this update?`) } : {}),
    });
    if (!json) for (const item of items) if (item.status === 'updated') this.log(`${green('✔')} Updated ${sanitize(item.name)}${item.to?.version ? ` to ${sanitize(item.to.version)}` : ''}.`);
    const refused = items.filter((i) => i.status === 'refused');
    const failed = items.filter((i) => i.status === 'failed');
    if (refused.length > 0) {
      throw new YepError('E_CONSENT_REQUIRED', `${refused.map((i) => i.name).join(', ')}: the update widens the grant and was not approved; nothing was changed for ${refused.length === 1 ? 'it' : 'them'}.`, {
        hint: `Review the diff, then re-run with ${refused.map((i) => `--accept ${i.to?.grant}`).join(' ')} (exactly this grant) or --yes.`,
        details: { updates: items },
      });
    }
    if (failed.length === 1 && items.length === 1) {
      const e = failed[0]!.error!;
      throw new YepError(e.code, e.message, { ...(e.hint ? { hint: e.hint } : {}), ...(e.details ? { details: e.details } : {}) });
    }
    if (failed.length > 0) {
      if (!json) for (const f of failed) this.logToStderr(`✖ ${f.name}: ${f.error?.message}`);
      throw new YepError('E_PARTIAL', `${failed.length} of ${items.length} updates failed.`, { details: { updates: items } });
    }
    return { updates: items };
  }
}

function renderPlanned(item: UpdateItem, dryRun: boolean): string {
  if (item.status === 'up-to-date') return `${item.name} is up to date.`;
  if (item.status === 'held') {
    const why = (item.engines?.skipped ?? []).map((s) => sanitize(s.reason)).join('; ');
    return `${yellow('held')} ${sanitize(item.name)} stays at ${sanitize(item.from.version ?? describeSource(item.from.source))}: ${why} (upgrade yolop, or pass --ignore-engines).`;
  }
  if (item.status === 'failed') return `${yellow('✖')} ${item.name}: ${sanitize(item.error?.message ?? 'failed', { keepNewlines: true })}`;
  const from = item.from.version ?? describeSource(item.from.source);
  const to = item.to?.version ?? (item.to ? describeSource(item.to.source) : '?');
  const lines = [`${bold(sanitize(item.name))} ${sanitize(from)} -> ${sanitize(to)}${dryRun ? ' (dry run)' : ''}`];
  if (item.diff) lines.push(...renderDiff(item.diff).map((l) => `  ${l}`));
  else if (item.consent_needed) lines.push('  the grant changed (the previously approved grant is not on record, so it cannot be shown as a diff)');
  if (item.binary) lines.push(`  ${sanitize(item.binary)}`);
  if (item.consent_needed) lines.push(`  ${yellow('consent needed')}: new grant ${item.to?.grant}`);
  return lines.join('\n');
}
