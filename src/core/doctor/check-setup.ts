/**
 * The check groups doctor runs before anything is spawned: `manifest` (it
 * parses, and names the directory it sits in), `config` (what would be
 * injected, and what required config is unset) and `command` (the server
 * command resolves to something that can start).
 */
import { YepError } from '../errors.js';
import { loadManifest, type Manifest } from '../package/manifest.js';
import { planConfigInjection, type ConfigInjection, type ServerConfig } from '../settings/server-config.js';
import { inspectServerCommand, type CommandInspection } from '../package/inspect-command.js';
import type { Report } from './report.js';
import type { Context } from '../context.js';
import { mayRunPackageCode } from '../policy/package-code.js';

/** `manifest`: the parsed manifest, or undefined after a failed check. */
export async function checkManifest(report: Report, dir: string, wanted: string | undefined): Promise<Manifest | undefined> {
  let manifest: Manifest;
  try {
    manifest = await loadManifest(dir);
  } catch (e) {
    if (e instanceof YepError && e.code === 'E_MANIFEST') {
      const problems = (e.details?.problems as string[] | undefined) ?? [e.message];
      report.add('manifest', 'fail', problems.join('; '));
      return undefined;
    }
    throw e;
  }
  if (wanted && manifest.name !== wanted) {
    report.add(
      'manifest',
      'fail',
      `the package directory is ${wanted} but plugin.json names ${manifest.name}: yolop skips such a package, so make the two the same`,
    );
    return undefined;
  }
  const y = manifest.yolop;
  const count = (n: number, what: string): string => (n ? `${n} ${what}${n > 1 ? 's' : ''}` : '');
  const facets = [
    count(y.tools.length, 'tool'),
    y.prompt ? 'prompt' : '',
    y.dynamic_prompt ? 'dynamic_prompt' : '',
    count(y.hooks.length, 'hook'),
    count(y.commands.length, 'command'),
    Object.keys(y.mcpServers).length ? `${Object.keys(y.mcpServers).length} MCP server(s)` : '',
    y.status ? 'status' : '',
    y.skills ? 'skills' : '',
    y.ui_ask ? 'ui_ask' : '',
    y.trace ? 'trace' : '',
  ].filter(Boolean);
  report.add('manifest', 'pass', `${manifest.name}${manifest.version ? ` ${manifest.version}` : ''}: ${facets.join(', ')}`);
  return manifest;
}

/** The commands that set each missing field: secrets by `set-secret`, the rest by `enable --config`. */
function setCommands(name: string, missing: ConfigInjection['missing']): string {
  const secrets = missing.filter((f) => f.secret).map((f) => `\`yep-ext set-secret ${name} ${f.key}\``);
  const plain = missing.filter((f) => !f.secret).map((f) => `${f.key}=<value>`);
  return [...secrets, ...(plain.length ? [`\`yep-ext enable ${name} ${plain.map((a) => `--config ${a}`).join(' ')}\``] : [])].join(', ');
}

/** `config`: what the server will be given (nothing with --no-config). No check when nothing is declared. */
export function checkConfig(report: Report, manifest: Manifest, loaded: ServerConfig | undefined, noConfig: boolean): ConfigInjection {
  if (noConfig) {
    const injection = planConfigInjection(manifest, undefined);
    if (injection.fields.length > 0) {
      const required = injection.missing.length ? `, required: ${injection.missing.map((f) => f.key).join(', ')}` : '';
      report.add('config', injection.missing.length ? 'warn' : 'pass', `not injected (--no-config); ${injection.fields.length} field(s) declared${required}`);
    }
    return injection;
  }
  const injection = planConfigInjection(manifest, loaded);
  if (injection.fields.length > 0) {
    const shown = injection.fields.map((f) => `${f.key}${f.secret ? ' (secret)' : ''}: ${f.set ? 'set' : 'unset'}${f.set && f.env ? ` -> $${f.env}` : ''}`);
    const notes: string[] = [];
    if (injection.missing.length)
      notes.push(
        `required but unset: ${injection.missing.map((f) => f.key + (f.env ? ` ($${f.env})` : '')).join(', ')} (set with ${setCommands(manifest.name, injection.missing)})`,
      );
    if (injection.unreachableSecrets.length) notes.push(`secret field(s) without "env" never reach the server: ${injection.unreachableSecrets.join(', ')}`);
    // Doctor hands the server keychain-held secrets; yolop reads only connections.toml and will not.
    const keychainOnly = injection.fields.filter((f) => f.secret && f.set && (loaded?.keychain ?? []).includes(f.key)).map((f) => f.key);
    if (keychainOnly.length) {
      notes.push(
        `${keychainOnly.join(', ')} ${keychainOnly.length === 1 ? 'is' : 'are'} in the OS keychain: doctor passes ${keychainOnly.length === 1 ? 'it' : 'them'} to the server, yolop will not (it reads only connections.toml; \`yep-ext set-secret ${manifest.name} ${keychainOnly[0]}\` without --keychain stores it there)`,
      );
    }
    report.add('config', notes.length ? 'warn' : 'pass', [shown.join(', '), ...notes].join('; '));
  }
  return injection;
}

/** Appended to a failed start: the required config that is unset may be why. */
export function missingConfigNote(injection: ConfigInjection): string {
  return injection.missing.length
    ? ` (note: required config is unset: ${injection.missing.map((f) => `${f.key}${f.secret ? ' (secret)' : ''}${f.env ? ` -> $${f.env}` : ''}`).join(', ')})`
    : '';
}

/**
 * `command`: the program to spawn, resolved as the host resolves it (the one resolver),
 * and let through by the one guard in front of package code (policy/package-code.ts:
 * the policy's `server_outside_package`, and never a program named by a path outside
 * the package); undefined after a failed check, and then nothing is started.
 */
export async function checkCommand(
  ctx: Context,
  report: Report,
  dir: string,
  manifest: Manifest,
): Promise<Extract<CommandInspection, { ok: true }> | undefined> {
  const command = manifest.yolop.capabilityServer.command;
  const resolved = await inspectServerCommand(dir, command, ctx.env.PATH ?? '');
  const verdict = await mayRunPackageCode(ctx, { kind: 'server', name: manifest.name, command, resolved }, 'run');
  if (!verdict.run || !resolved.ok) {
    report.add('command', 'fail', verdict.run ? resolved.detail : verdict.ask ? `${resolved.detail}; not started` : verdict.why);
    return undefined;
  }
  report.add('command', resolved.warning ? 'warn' : 'pass', resolved.warning ? `${resolved.detail}; ${resolved.warning}` : resolved.detail);
  return resolved;
}
