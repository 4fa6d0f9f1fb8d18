/**
 * `enable` with setup: type and validate `--config` values, ask for whatever
 * required field is still unset (only when interactive, through an injected
 * prompter: core never prompts itself), then, under the installer lock, store
 * the secrets and write the switch and config to settings.toml in one atomic
 * write. Prompting happens before the lock is taken so a slow typist never
 * blocks another yep-ext.
 *
 * Decision (docs/configuration.md): when required fields are still missing the
 * extension IS enabled and the values given are saved; the run then fails with
 * E_SETUP_INCOMPLETE (exit 10) listing the exact commands that finish the setup.
 */
import { configFields, type ConfigField, type Manifest } from '../package/manifest.js';
import { resolveInstalled } from '../store/installed-name.js';
import type { Context } from '../context.js';
import { checkAgainstAgent } from '../agent/agent-version.js';
import { describeVerdict, type EnginesVerdict } from '../agent/engines.js';
import { YepError } from '../errors.js';
import { withInstallLock } from '../store/install-lock.js';
import { configStatus, missingFields, type FieldStatus } from '../settings/config-status.js';
import { assertConfigValue, checkTypedText, coerceConfigValue, parseAssignment } from '../settings/config-values.js';
import { assertStillInstalled, loadInstalledManifest } from '../store/installed-manifest.js';
import { keychainOptions } from '../settings/keychain.js';
import type { Secret } from '../settings/secret-value.js';
import { chooseSecretStore, setSecret, type SecretStoreKind } from '../settings/secrets.js';
import { enableExtension, readExtensionSettings } from '../settings/settings.js';
import { profileFile } from '../settings/profiles.js';
import { findEntry, loadStoreLock } from '../store/lockfile.js';
import { unbuiltServer, type UnbuiltServer } from '../package/server-build.js';
import { inspectServerCommand } from '../package/inspect-command.js';
import { packageDir } from '../paths.js';
import { isLinked } from '../sources/index.js';
import { policyError } from '../policy/evaluate.js';
import { installedViolations, pinnedAsOnDisk, unlockedViolations, withPolicy } from './policy-gate.js';
import { installedGrantJudgement } from './grant-approval.js';
import { grantOf } from '../package/grants.js';
import { sanitize } from '../text/sanitize.js';

/** Validation callback for prompts: true when fine, else the message to show. */
export type PromptValidator = (raw: string) => true | string;

/** How setup asks the user; the CLI supplies one (src/cli/prompts.ts), tests a script. */
export interface FieldPrompter {
  /** Masked entry. */
  secret(field: ConfigField, extension: string, validate: PromptValidator): Promise<Secret>;
  /** One of `choices`. */
  select(field: ConfigField, extension: string, choices: string[]): Promise<string>;
  /** Free text, typed afterwards by the schema. */
  text(field: ConfigField, extension: string, validate: PromptValidator): Promise<string>;
}

export interface EnableOptions {
  /** `key=value` assignments for non-secret fields. */
  config?: string[];
  /** Used only when ctx.interactive. */
  prompter?: FieldPrompter;
  /** Where prompted secrets go (default: chooseSecretStore(ctx.env)). */
  secretStore?: SecretStoreKind;
  /** Enable even when the package's `engines.yolop` excludes the installed agent (--ignore-engines). */
  ignoreEngines?: boolean;
  /** Write `<config>/profiles/<profile>.toml` as yolop does under `--profile`, read over settings.toml (settings.ts). */
  profile?: string;
}

interface MissingField {
  key: string;
  secret: boolean;
  /** The command that sets it. */
  command: string;
}

export interface EnableResult {
  name: string;
  enabled: true;
  /** Anything written (settings or secrets). */
  changed: boolean;
  was_enabled: boolean;
  /** The profile written (`--profile`), or null for settings.toml. */
  profile: string | null;
  /** Non-secret keys written to settings.toml (or the profile). */
  config_set: string[];
  /** Secret keys stored, and where. */
  secrets_set: { key: string; store: SecretStoreKind }[];
  fields: FieldStatus[];
  /** `engines.yolop` against the installed agent. */
  engines: EnginesVerdict;
}

/** Placeholder for a value in a suggested command: `<integer>`, `<a|b>`. */
function placeholder(field: ConfigField): string {
  if (field.enum && field.enum.length > 0) return `<${field.enum.join('|')}>`;
  return `<${field.type ?? 'value'}>`;
}

/** The exact commands that set each missing field. */
function fixCommands(name: string, missing: { key: string; secret: boolean }[], manifest: Manifest): MissingField[] {
  const byKey = new Map(configFields(manifest).map((f) => [f.key, f]));
  return missing.map((m) => {
    const field = byKey.get(m.key);
    const command = m.secret ? `yep-ext set-secret ${name} ${m.key}` : `yep-ext enable ${name} --config ${m.key}=${field ? placeholder(field) : '<value>'}`;
    return { key: m.key, secret: m.secret, command };
  });
}

/** The commands to type, in the fields' order: one `enable` with every missing --config (not one enable per field), each set-secret. */
function hintCommands(name: string, fixes: MissingField[]): string[] {
  const configs = fixes.filter((f) => !f.secret).map((f) => f.command.slice(f.command.indexOf(' --config ')));
  const firstConfig = fixes.findIndex((f) => !f.secret);
  return fixes.flatMap((f, i) => (f.secret ? [f.command] : i === firstConfig ? [`yep-ext enable ${name}${configs.join('')}`] : []));
}

function setupIncomplete(name: string, manifest: Manifest, result: EnableResult, missing: FieldStatus[]): YepError {
  const fixes = fixCommands(name, missing, manifest);
  const list = missing.map((m) => (m.secret ? `${m.key} (secret)` : m.key)).join(', ');
  return new YepError(
    'E_SETUP_INCOMPLETE',
    `${name} is enabled but not configured: required ${missing.length === 1 ? 'field' : 'fields'} ${list} ${missing.length === 1 ? 'is' : 'are'} unset. yolop will start it without ${missing.length === 1 ? 'it' : 'them'}.`,
    {
      hint: `Run:\n${hintCommands(name, fixes)
        .map((c) => `  ${c}`)
        .join('\n')}${fixes.some((f) => f.secret) ? '\n(set-secret prompts with hidden input; add --stdin to pipe the value instead)' : ''}`,
      details: { status: 'setup_incomplete', ...result, missing: fixes },
    },
  );
}

/** Turn `--config` assignments into typed, validated values (refusing secrets and unknown keys). */
export function parseConfigAssignments(manifest: Manifest, assignments: string[]): Record<string, unknown> {
  const fields = new Map(configFields(manifest).map((f) => [f.key, f]));
  const out: Record<string, unknown> = {};
  for (const text of assignments) {
    const { key, raw } = parseAssignment(text);
    const field = fields.get(key);
    if (!field) {
      const declared = [...fields.values()].filter((f) => !f.secret).map((f) => f.key);
      throw new YepError('E_USAGE', `${manifest.name} declares no config field "${key.slice(0, 60)}".`, {
        hint: declared.length > 0 ? `Declared fields: ${declared.join(', ')}.` : `${manifest.name} declares no settable config.`,
      });
    }
    if (field.secret) {
      // Never echo the value: it was meant to be a secret and is already in argv.
      throw new YepError('E_USAGE', `${manifest.name}.${key} is a secret and cannot be given with --config (command lines are visible to other processes).`, {
        hint: `Run \`yep-ext set-secret ${manifest.name} ${key}\` (hidden prompt) or pipe it with --stdin.`,
      });
    }
    const value = coerceConfigValue(field, raw, manifest.name);
    assertConfigValue(field, value, manifest.name);
    out[key] = value;
  }
  return out;
}

/** Ask for every missing required field (interactive runs only). */
async function askMissing(
  manifest: Manifest,
  missing: FieldStatus[],
  prompter: FieldPrompter,
): Promise<{ config: Record<string, unknown>; secrets: Map<string, Secret> }> {
  const fields = new Map(configFields(manifest).map((f) => [f.key, f]));
  const config: Record<string, unknown> = {};
  const secrets = new Map<string, Secret>();
  for (const m of missing) {
    const field = fields.get(m.key) as ConfigField;
    if (field.secret) secrets.set(field.key, await prompter.secret(field, manifest.name, (raw) => checkTypedText(field, raw, manifest.name)));
    else if (field.enum && field.enum.length > 0) {
      const choice = await prompter.select(field, manifest.name, field.enum);
      assertConfigValue(field, choice, manifest.name);
      config[field.key] = choice;
    } else {
      const raw = await prompter.text(field, manifest.name, (raw) => checkTypedText(field, raw, manifest.name));
      const value = coerceConfigValue(field, raw, manifest.name);
      assertConfigValue(field, value, manifest.name);
      config[field.key] = value;
    }
  }
  return { config, secrets };
}

/**
 * A refusal of an extension that settings.toml already turns on changes nothing, and
 * nothing it changes is "off": yolop keeps loading it. The refusal says so, with the
 * command that does turn it off, instead of reading as if it were not enabled.
 */
function stillEnabled(e: YepError, name: string, enabledNow: boolean): YepError {
  if (!enabledNow) return e;
  return new YepError(e.code, `${e.message} ${name} stays enabled: settings.toml already turns it on, and yolop loads it.`, {
    hint: `\`yep-ext disable ${name}\` turns it off.${e.hint ? ` ${e.hint}` : ''}`,
    details: { ...(e.details ?? {}), enabled: true },
  });
}

/** E_ENGINES when the range excludes the agent (unless overridden); warnings for the other doubtful verdicts. */
function assertAgentCanRun(ctx: Context, manifest: Manifest, engines: EnginesVerdict, ignore: boolean, enabledNow: boolean): void {
  const label = `${manifest.name}${manifest.version !== undefined ? ` ${manifest.version}` : ''}`;
  if (engines.status === 'excludes') {
    if (ignore) {
      ctx.log.warn(`${describeVerdict(label, engines)}; enabling it anyway (--ignore-engines).`);
      return;
    }
    const refused = new YepError(
      'E_ENGINES',
      `${describeVerdict(label, engines)}: yolop cannot run it, so ${enabledNow ? 'this command changed nothing.' : 'it was not enabled.'}`,
      {
        hint: `Upgrade yolop, or move to a version that supports yolop ${engines.agent} (\`yep-ext update ${manifest.name}\` picks the newest that does). To enable it anyway: \`yep-ext enable ${manifest.name} --ignore-engines\`.`,
        details: { engines },
      },
    );
    throw stillEnabled(refused, manifest.name, enabledNow);
  }
  if (engines.status === 'unknown-agent') ctx.log.warn(`${describeVerdict(label, engines)}; not checked.`);
  if (engines.status === 'malformed') ctx.log.warn(`${describeVerdict(label, engines)}.`);
}

/** A local (in-place) package whose server is not built yet: the build it needs, in the user's directory. */
async function localBuildPending(ctx: Context, name: string, manifest: Manifest): Promise<UnbuiltServer | undefined> {
  // Only a local directory is built by its author: a fetched crate without its server is a package-only install.
  const entry = findEntry(await loadStoreLock(ctx.paths), name);
  if (!entry || !isLinked(entry.source) || typeof entry.source.path !== 'string') return undefined;
  return unbuiltServer(entry.source.path, manifest.yolop.capabilityServer.command);
}

/**
 * What is installed asks for no more than the user approved (the lock's grant): an extension
 * whose tree now asks for more (a path package edited in place, a hand-changed store tree) is
 * not switched on here. `update` shows the difference and asks, and re-pins what it approves.
 */
async function assertGrantApproved(ctx: Context, name: string, manifest: Manifest, enabledNow: () => Promise<boolean>): Promise<void> {
  const entry = findEntry(await loadStoreLock(ctx.paths), name);
  if (!entry) return;
  const judged = await installedGrantJudgement(ctx, entry, grantOf(manifest));
  if (!judged || judged.approved) return;
  const lines = judged.diff
    ? judged.diff.changes
        .filter((c) => c.effect === 'widening')
        .map((c) => `  + ${c.facet} ${c.kind}: ${sanitize(c.key, { max: 200 })} (${sanitize(c.reason, { max: 200 })})`)
    : [];
  if (!judged.widens) {
    ctx.log.warn(`${name} changed since it was approved, asking for no more than before; \`yep-ext update ${name}\` re-pins it.`);
    return;
  }
  const error = new YepError(
    'E_CONSENT_REQUIRED',
    `${name} now asks for more than was approved when it was installed${lines.length ? `:\n${lines.join('\n')}` : ' (the approved grant cannot be proved)'}`,
    {
      hint: `Review and approve it with \`yep-ext update ${name}\` (it shows the whole difference and asks), then enable it.`,
      details: { name, grant: judged.diff?.to ?? null },
    },
  );
  throw stillEnabled(error, name, await enabledNow());
}

/** What keeps an enabled extension from working in yolop yet: a server not built or not found, a secret yolop cannot read. */
async function warnNotReady(ctx: Context, name: string, manifest: Manifest, fields: FieldStatus[]): Promise<void> {
  const build = await localBuildPending(ctx, name, manifest);
  if (build) ctx.log.warn(`${name}'s server is not built yet (${build.missing} is missing): yolop cannot start it until you run \`${build.command}\`.`);
  else {
    // Said here as install and doctor say it (the one resolver): enabled, but the agent cannot start it yet.
    const command = await inspectServerCommand(packageDir(ctx.paths, name), manifest.yolop.capabilityServer.command, ctx.env.PATH ?? '');
    if (!command.ok) ctx.log.warn(`${name}'s server cannot start yet: ${command.detail}.`);
  }
  for (const f of fields) {
    if (f.source === 'keychain')
      ctx.log.warn(`${name}.${f.key} is in the OS keychain, which yolop does not read: the agent will start ${name} without it (see docs/secrets.md).`);
  }
}

/** Enable an installed extension, setting config and asking for missing required fields. */
export async function runEnable(ctx: Context, input: string, options: EnableOptions = {}): Promise<EnableResult> {
  const name = await resolveInstalled(ctx, input);
  // A profile that does not exist is refused before anything is read or asked.
  if (options.profile !== undefined) profileFile(ctx.paths, options.profile);
  const scope = { profile: options.profile };
  const readSettings = () => readExtensionSettings(ctx.paths, name, options.profile);
  const manifest = await loadInstalledManifest(ctx.paths, name);
  // The policy file may forbid what is already installed: it is never switched on (docs/policy.md).
  const { policy } = withPolicy(ctx);
  const entry = policy.files.length > 0 ? findEntry(await loadStoreLock(ctx.paths), name) : undefined;
  // A refusal below writes nothing; when settings.toml already turns the extension on, it must say it stays on.
  const enabledNow = async (): Promise<boolean> =>
    readSettings().then(
      (s) => s.enabled,
      () => false,
    );
  if (entry) {
    const violations = await installedViolations(ctx, policy, await pinnedAsOnDisk(ctx, policy, entry), manifest);
    if (violations.length > 0) throw stillEnabled(policyError(violations, policy), name, await enabledNow());
  } else if (policy.files.length > 0) {
    // A store package no lock entry pins (placed by hand): the host loads it all the same, so the policy rules it too.
    const violations = await unlockedViolations(ctx, policy, name, manifest);
    if (violations.length > 0) throw stillEnabled(policyError(violations, policy), name, await enabledNow());
  }
  await assertGrantApproved(ctx, name, manifest, enabledNow);
  // Enabling is what would break the agent: refuse before anything is asked or written.
  const engines = await checkAgainstAgent(ctx, manifest);
  assertAgentCanRun(
    ctx,
    manifest,
    engines,
    options.ignoreEngines === true,
    engines.status === 'excludes' && options.ignoreEngines !== true && (await enabledNow()),
  );
  const given = parseConfigAssignments(manifest, options.config ?? []);
  const store = options.secretStore ?? chooseSecretStore(ctx.env);

  const before = await configStatus(ctx.paths, manifest, await readSettings());
  const stillMissing = missingFields(before).filter((f) => !(f.key in given));
  let prompted = { config: {} as Record<string, unknown>, secrets: new Map<string, Secret>() };
  if (ctx.interactive && options.prompter && stillMissing.length > 0) {
    ctx.log.info(`${name} needs ${stillMissing.length === 1 ? 'a setting' : `${stillMissing.length} settings`} before it can work.`);
    prompted = await askMissing(manifest, stillMissing, options.prompter);
  }
  const config = { ...given, ...prompted.config };

  return withInstallLock(ctx, async () => {
    // Taking the lock may have completed an interrupted removal of it (recovery), or waited out one.
    await assertStillInstalled(ctx.paths, name);
    const wasEnabled = (await readSettings()).enabled;
    let changed = false;
    // Secrets first, then settings.toml in ONE write (the switch and the config
    // together). The host reads a secret only for an enabled extension, so until
    // settings.toml is renamed into place it loads what it loaded before; after
    // the rename it loads the new state (docs/reliability.md, "enable").
    const secretsSet: EnableResult['secrets_set'] = [];
    for (const [key, value] of prompted.secrets) {
      const r = await setSecret(ctx.paths, name, key, value, { store, keychain: keychainOptions(ctx) });
      for (const w of r.warnings) ctx.log.warn(w);
      secretsSet.push({ key, store: r.store });
      changed = r.changed || changed;
    }
    changed = (await enableExtension(ctx.paths, name, config, scope)).changed || changed;
    const fields = await configStatus(ctx.paths, manifest, await readSettings());
    const result: EnableResult = {
      name,
      enabled: true,
      changed,
      was_enabled: wasEnabled,
      profile: options.profile ?? null,
      config_set: Object.keys(config),
      secrets_set: secretsSet,
      fields,
      engines,
    };
    await warnNotReady(ctx, name, manifest, fields);
    const missing = missingFields(fields);
    if (missing.length > 0) throw setupIncomplete(name, manifest, result, missing);
    return result;
  });
}
