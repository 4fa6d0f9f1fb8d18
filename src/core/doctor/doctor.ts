/**
 * `yep-ext doctor`: spawn an extension's server the way the host does, drive it
 * through the protocol and grade what it does. The host's doctor (host-compat
 * §9) is the floor: same check names and JSON shape for what it checks, plus
 * config injection, schema validation of every message, probes of the error,
 * cancel, prompt and hook paths, a real graceful stop, an EOF-only stop and a
 * check that nothing is left running. Every wait is bounded, and the server's
 * process group is always gone when this returns or throws.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { resolveExtensionName } from '../store/installed-name.js';
import type { Context } from '../context.js';
import { YepError } from '../errors.js';
import { loadManifest, type HookDecl, type Manifest } from '../package/manifest.js';
import { normalizeExtensionName } from '../package/names.js';
import { packageDir } from '../paths.js';
import { redactText, redactValue } from '../text/redact.js';
import { inspectServerCommand } from './inspect-command.js';
import { enginesCheck } from './engines-check.js';
import { planConfigInjection, type ConfigInjection, type ServerConfig } from '../settings/server-config.js';
import { YepClient, YepRequestError, type StopReport } from '../yep/client.js';
import { CAPABILITY_TOKENS, ERROR_CODE, HookDecision, PROTOCOL_VERSION, PromptContribution, type InitializeResult } from '../yep/protocol.js';
import { decodeLenient, payloadProblems } from '../yep/validate.js';
import { checkCompatibility } from '../yep/version.js';

export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  detail: string;
}

export interface DoctorCallReport {
  tool: string;
  updates: string[];
  result?: unknown;
  error?: string;
  duration_ms?: number;
}

/** The report; `name`, `ok` and `checks` are the host's shape, the rest are extras. */
export interface DoctorReport {
  name: string;
  ok: boolean;
  checks: DoctorCheck[];
  package_dir: string;
  source: 'installed' | 'path';
  /** The server's stderr tail (secrets redacted), present when a check failed. */
  stderr_tail?: string;
  call?: DoctorCallReport;
  /** Messages that broke the protocol, with their sequence number. */
  problems: string[];
  /** Pids (= process group ids) of the server runs. */
  server_pids: number[];
  duration_ms: number;
}

export type DoctorTarget = { kind: 'installed'; name: string; /** What was typed (an exact installed name wins over the crate spelling). */ raw?: string } | { kind: 'path'; dir: string };

/**
 * SEAM(config): how doctor gets an extension's configured values and secrets.
 * The caller supplies it (the CLI wires it to settings.toml + connections.toml);
 * doctor only applies the host's injection rules to what it gets.
 */
export type DoctorConfigLoader = (name: string, manifest: Manifest) => Promise<ServerConfig | undefined>;

export interface DoctorOptions {
  target: DoctorTarget;
  /** The server's cwd and `initialize.workspace_root` (the CLI passes its cwd). */
  workspaceRoot: string;
  /** Handshake timeout (default 20 s, the host's). */
  timeoutMs?: number;
  /** Timeout for each probe request (default min(5 s, timeoutMs)). */
  probeTimeoutMs?: number;
  /** Grace period for each stop step (default 2 s). */
  graceMs?: number;
  /** Loads configured values and secrets; omitted = nothing injected. */
  loadConfig?: DoctorConfigLoader;
  /** True for `--no-config`: inject nothing, say so. */
  noConfig?: boolean;
  /** Run one tool call after the probes. */
  call?: { tool: string; args: unknown };
  /** Each streamed `tool/update` of the call, as it arrives (already redacted). */
  onUpdate?: (output: string) => void;
  /** Stdout line cap for the client (default 8 MiB). */
  maxLineBytes?: number;
  /** Bytes of stderr kept for the report (default 4 KiB). */
  stderrTailBytes?: number;
}

export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 20_000;
const PROBE_METHOD = 'doctor/no-such-method';
const UNUSED_REQUEST_ID = 999_999;

/** `./dir`, `../dir`, `/abs`, `dir/sub`, `~/dir` and `.` are paths; anything else is an extension name. */
export function parseDoctorTarget(arg: string, cwd: string, home?: string): DoctorTarget {
  const looksLikePath = arg.includes('/') || arg.includes('\\') || arg === '.' || arg === '..' || arg === '~';
  if (!looksLikePath) return { kind: 'installed', name: normalizeExtensionName(arg), raw: arg };
  // A quoted `~/x` reaches us unexpanded.
  const expanded = home && (arg === '~' || arg.startsWith('~/')) ? join(home, arg.slice(1)) : arg;
  return { kind: 'path', dir: isAbsolute(expanded) ? expanded : resolve(cwd, expanded) };
}

class Report {
  checks: DoctorCheck[] = [];
  add(name: string, status: CheckStatus, detail: string): CheckStatus {
    this.checks.push({ name, status, detail });
    return status;
  }
  get failed(): boolean {
    return this.checks.some((c) => c.status === 'fail');
  }
}

const ms = (n: number): string => (n >= 1000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`);

function describeExit(client: YepClient): string {
  const x = client.exit;
  if (!x) return 'is still running';
  if (x.spawnError) return `could not be started: ${x.spawnError.code ?? ''} ${x.spawnError.message}`.trim();
  return x.signal ? `was killed by ${x.signal} after ${ms(x.at)}` : `exited with code ${x.code} after ${ms(x.at)}`;
}

function describeFailure(e: unknown, client: YepClient): string {
  if (!(e instanceof YepRequestError)) return String((e as Error)?.message ?? e);
  switch (e.kind) {
    case 'timeout':
      return `no answer within the timeout (${e.message.replace(/^.*within /, '')})`;
    case 'exited':
    case 'not-running':
      return `the server ${describeExit(client)}`;
    case 'overflow':
      return e.message.replace(/^[^:]+: /, '');
    default:
      return e.message;
  }
}

function sampleToolName(glob: string): string {
  return glob.replace(/\*/g, 'doctor_probe') || 'doctor_probe';
}

async function resolveTarget(ctx: Context, target: DoctorTarget): Promise<{ dir: string; source: 'installed' | 'path'; wanted?: string }> {
  if (target.kind === 'installed') {
    target = { ...target, name: resolveExtensionName(ctx.paths, target.raw ?? target.name) };
    const dir = packageDir(ctx.paths, target.name);
    if (!existsSync(dir)) {
      throw new YepError('E_NOT_INSTALLED', `${target.name} is not installed (no ${dir}).`, {
        hint: `Run \`yep-ext list\` to see installed extensions; to check a package directory, pass a path such as ./${target.name}.`,
      });
    }
    return { dir, source: 'installed', wanted: target.name };
  }
  let st;
  try {
    st = statSync(target.dir);
  } catch {
    throw new YepError('E_NOT_FOUND', `No such directory: ${target.dir}.`, { hint: 'Pass the package directory (the one holding plugin.json).' });
  }
  if (!st.isDirectory()) throw new YepError('E_USAGE', `${target.dir} is not a directory.`, { hint: 'Pass the package directory (the one holding plugin.json).' });
  return { dir: target.dir, source: 'path' };
}

/** Run every check and return the report. Throws only for a bad target or an interrupt. */
export async function runDoctor(ctx: Context, options: DoctorOptions): Promise<DoctorReport> {
  const t0 = Date.now();
  const { dir, source, wanted } = await resolveTarget(ctx, options.target);
  const report = new Report();
  const timeoutMs = options.timeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
  const probeMs = options.probeTimeoutMs ?? Math.min(5000, timeoutMs);
  const graceMs = options.graceMs ?? 2000;
  let secrets: string[] = [];
  const clients: YepClient[] = [];
  let call: DoctorCallReport | undefined;
  let name = wanted ?? basename(dir);

  const finish = (): DoctorReport => {
    const problems = clients.flatMap((c, i) => c.problems.map((p) => `${clients.length > 1 ? `run ${i + 1} ` : ''}#${p.seq}: ${p.text}`));
    const tail = clients.map((c) => c.stderrTail()).filter((t) => t.trim() !== '').join('\n--- second run ---\n');
    const out: DoctorReport = {
      name,
      ok: !report.failed,
      checks: report.checks,
      package_dir: dir,
      source,
      ...(report.failed && tail ? { stderr_tail: tail } : {}),
      ...(call ? { call } : {}),
      problems,
      server_pids: clients.flatMap((c) => (c.pid === undefined ? [] : [c.pid])),
      duration_ms: Date.now() - t0,
    };
    return redactValue(out, secrets);
  };
  const interrupted = (): never => {
    for (const c of clients) c.kill();
    throw new YepError('E_INTERRUPTED', 'Interrupted: the server was stopped.');
  };

  // manifest
  let manifest: Manifest;
  try {
    manifest = await loadManifest(dir);
  } catch (e) {
    if (e instanceof YepError && e.code === 'E_MANIFEST') {
      const problems = (e.details?.problems as string[] | undefined) ?? [e.message];
      report.add('manifest', 'fail', problems.join('; '));
      return finish();
    }
    throw e;
  }
  name = manifest.name;
  const y = manifest.yolop;
  if (wanted && manifest.name !== wanted) {
    report.add('manifest', 'fail', `the package directory is ${wanted} but plugin.json names ${manifest.name}; the host skips such a package`);
    return finish();
  }
  const facets = [
    y.tools.length ? `${y.tools.length} tool${y.tools.length > 1 ? 's' : ''}` : '',
    y.prompt ? 'prompt' : '',
    y.dynamic_prompt ? 'dynamic_prompt' : '',
    y.hooks.length ? `${y.hooks.length} hook${y.hooks.length > 1 ? 's' : ''}` : '',
    y.commands.length ? `${y.commands.length} command${y.commands.length > 1 ? 's' : ''}` : '',
    Object.keys(y.mcpServers).length ? `${Object.keys(y.mcpServers).length} MCP server(s)` : '',
    y.status ? 'status' : '',
    y.skills ? 'skills' : '',
    y.ui_ask ? 'ui_ask' : '',
    y.trace ? 'trace' : '',
  ].filter(Boolean);
  report.add('manifest', 'pass', `${manifest.name}${manifest.version ? ` ${manifest.version}` : ''}: ${facets.join(', ')}`);
  const engines = await enginesCheck(ctx, manifest);
  if (engines) report.add(engines.name, engines.status, engines.detail);

  // config
  let injection: ConfigInjection;
  if (options.noConfig) {
    injection = planConfigInjection(manifest, undefined);
    if (injection.fields.length > 0) report.add('config', injection.missing.length ? 'warn' : 'pass', `not injected (--no-config); ${injection.fields.length} field(s) declared${injection.missing.length ? `, required: ${injection.missing.map((f) => f.key).join(', ')}` : ''}`);
  } else {
    const loaded = options.loadConfig ? await options.loadConfig(manifest.name, manifest) : undefined;
    injection = planConfigInjection(manifest, loaded);
    secrets = injection.secretValues;
    if (injection.fields.length > 0) {
      const shown = injection.fields.map((f) => `${f.key}${f.secret ? ' (secret)' : ''}: ${f.set ? 'set' : 'unset'}${f.set && f.env ? ` -> $${f.env}` : ''}`);
      const notes: string[] = [];
      if (injection.missing.length) notes.push(`required but unset: ${injection.missing.map((f) => f.key + (f.env ? ` ($${f.env})` : '')).join(', ')} (set with \`yep-ext set-secret\`/\`yep-ext config\`)`);
      if (injection.unreachableSecrets.length) notes.push(`secret field(s) without "env" never reach the server: ${injection.unreachableSecrets.join(', ')}`);
      report.add('config', notes.length ? 'warn' : 'pass', [shown.join(', '), ...notes].join('; '));
    }
  }
  const missingNote = (): string =>
    injection.missing.length ? ` (note: required config is unset: ${injection.missing.map((f) => `${f.key}${f.secret ? ' (secret)' : ''}${f.env ? ` -> $${f.env}` : ''}`).join(', ')})` : '';

  // command
  const inheritedPath = ctx.env.PATH ?? '';
  const resolved = await inspectServerCommand(dir, y.capabilityServer.command, inheritedPath);
  if (!resolved.ok) {
    report.add('command', 'fail', resolved.detail);
    return finish();
  }
  report.add('command', resolved.warning ? 'warn' : 'pass', resolved.warning ? `${resolved.detail}; ${resolved.warning}` : resolved.detail);

  const startClient = (): YepClient => {
    const c = YepClient.start(
      { command: resolved.path, args: y.capabilityServer.args, packageDir: dir, workspaceRoot: options.workspaceRoot, env: ctx.env, injectedEnv: injection.env },
      {
        requestTimeoutMs: probeMs,
        ...(options.maxLineBytes ? { maxLineBytes: options.maxLineBytes } : {}),
        stderrTailBytes: options.stderrTailBytes ?? 4096,
        signal: ctx.signal,
      },
    );
    clients.push(c);
    return c;
  };
  const initParams = {
    protocol_version: PROTOCOL_VERSION,
    session_id: 'doctor',
    workspace_root: options.workspaceRoot,
    config: injection.initConfig,
  };

  // spawn
  const stops: StopReport[] = [];
  const client = startClient();
  try {
    if (!(await client.spawned)) {
      report.add('spawn', 'fail', `the server ${describeExit(client)}${missingNote()}`);
      return finish();
    }
    report.add('spawn', 'pass', `pid ${client.pid} (${[y.capabilityServer.command, ...y.capabilityServer.args].join(' ')})`);

    // handshake
    let init: InitializeResult | undefined;
    const hs0 = Date.now();
    try {
      init = await client.initialize(initParams, { timeoutMs });
      report.add('handshake', 'pass', `answered initialize in ${ms(Date.now() - hs0)}`);
    } catch (e) {
      if (ctx.signal.aborted) interrupted();
      report.add('handshake', 'fail', `initialize: ${describeFailure(e, client)}${missingNote()}`);
    }

    if (init) {
      if (gradeHandshake(report, manifest, init)) {
        await probeServer(client, report, manifest, probeMs, initParams);
        if (options.call) call = await runCall(client, report, manifest, init, options, timeoutMs, secrets);
      }
      if (ctx.signal.aborted) interrupted();
      stops.push(await stopAndGrade(client, report, graceMs, 'shutdown'));
      if (ctx.signal.aborted) interrupted();
      // A second, short run: the host may stop a server by just closing its stdin.
      const second = startClient();
      if (!(await second.spawned)) report.add('stdin_eof', 'fail', `second run: the server ${describeExit(second)}`);
      else {
        try {
          await second.initialize(initParams, { timeoutMs });
          stops.push(await stopAndGrade(second, report, graceMs, 'stdin_eof'));
        } catch (e) {
          if (ctx.signal.aborted) interrupted();
          report.add('stdin_eof', 'fail', `second run: initialize: ${describeFailure(e, second)}`);
          stops.push(await second.stop({ graceMs }));
        }
      }
    } else {
      stops.push(await client.stop({ graceMs }));
    }
    if (ctx.signal.aborted) interrupted();

    const problemTotal = clients.reduce((n, c) => n + c.problemTotal, 0);
    const received = clients.reduce((n, c) => n + c.records.filter((r) => r.direction === 'in' && r.kind !== 'malformed').length, 0);
    if (problemTotal === 0) report.add('messages', 'pass', `${received} message(s) received, all valid YEP v1 (schema/yep/v1/schema.json)`);
    else {
      const firstFew = clients.flatMap((c) => c.problems.map((p) => p.text)).slice(0, 3);
      report.add('messages', 'fail', `${problemTotal} problem(s): ${firstFew.join(' | ')}${problemTotal > 3 ? ' | …' : ''}`);
    }
    gradeProcesses(report, stops);
    return finish();
  } finally {
    // Whatever happened above (including an exception), nothing outlives doctor.
    for (const c of clients) c.kill();
    await Promise.all(clients.map((c) => c.stop({ graceMs: 0, shutdown: false }).catch(() => undefined)));
  }
}

/** protocol_version, name, capabilities, tools, prompt. Returns false when the majors differ. */
function gradeHandshake(report: Report, manifest: Manifest, init: InitializeResult): boolean {
  const y = manifest.yolop;
  let compatible = true;
  if (init.protocol_version === '') report.add('protocol_version', 'warn', `the server did not state protocol_version (the host speaks ${PROTOCOL_VERSION})`);
  else {
    const c = checkCompatibility(init.protocol_version);
    if (!c.compatible) {
      compatible = false;
      report.add('protocol_version', 'fail', `server speaks ${JSON.stringify(init.protocol_version)}: ${c.reason}; the host refuses it`);
    } else report.add('protocol_version', 'pass', `${init.protocol_version} (host ${PROTOCOL_VERSION})${c.note ? `; ${c.note}` : ''}`);
  }
  if (init.name === '') report.add('name', 'warn', `the server did not state its name (manifest: ${manifest.name})`);
  else if (init.name !== manifest.name) report.add('name', 'warn', `server calls itself ${JSON.stringify(init.name)}, the manifest says ${JSON.stringify(manifest.name)}`);
  else report.add('name', 'pass', init.name);

  const known = new Set<string>(CAPABILITY_TOKENS);
  const declared: Record<string, boolean> = {
    tools: y.tools.length > 0,
    prompt: y.prompt,
    dynamic_prompt: y.dynamic_prompt,
    hooks: y.hooks.length > 0,
    mcp_servers: Object.keys(y.mcpServers).length > 0,
    status: y.status,
    commands: y.commands.length > 0,
    ui_ask: y.ui_ask,
    trace: y.trace,
  };
  const undeclared = init.capabilities.filter((t) => t in declared && !declared[t]);
  const unknown = init.capabilities.filter((t) => !known.has(t));
  const capDetail = [`advertised: ${init.capabilities.length ? init.capabilities.join(', ') : '(none)'}`];
  if (undeclared.length) capDetail.push(`not declared in the manifest, so the host ignores them: ${undeclared.join(', ')}`);
  if (unknown.length) capDetail.push(`unknown tokens (ignored): ${unknown.join(', ')}`);
  report.add('capabilities', undeclared.length ? 'warn' : 'pass', capDetail.join('; '));

  const servedList = init.capability_params?.tools;
  const served = (servedList ?? []).map((t) => t.name);
  const manifestTools = new Set(y.tools.map((t) => t.name));
  const extra = served.filter((t) => !manifestTools.has(t));
  const unserved = [...manifestTools].filter((t) => !served.includes(t));
  const dupes = served.filter((t, i) => served.indexOf(t) !== i);
  if (extra.length) {
    report.add('tools', 'fail', `served but not in the manifest (the host drops them, D4 clamp): ${extra.join(', ')}${unserved.length ? `; declared but not served: ${unserved.join(', ')}` : ''}`);
  } else if (servedList === undefined && manifestTools.size > 0) {
    report.add('tools', 'warn', `capability_params.tools is missing: list the tools this run serves (the manifest declares ${[...manifestTools].join(', ')})`);
  } else if (unserved.length || dupes.length) {
    const parts = [];
    if (unserved.length) parts.push(`declared in the manifest but not served: ${unserved.join(', ')}`);
    if (dupes.length) parts.push(`served twice: ${[...new Set(dupes)].join(', ')}`);
    report.add('tools', 'warn', parts.join('; '));
  } else report.add('tools', 'pass', served.length ? `serves ${served.join(', ')}` : 'no tools (none declared)');

  const offered = (init.capability_params?.prompt?.static ?? '') !== '';
  if (offered && !y.prompt) report.add('prompt', 'warn', 'the server offers a static prompt but the manifest does not declare "prompt": the host ignores it');
  else if (y.prompt && !offered && !y.dynamic_prompt) report.add('prompt', 'warn', 'the manifest declares "prompt" but the server sent no static prompt and "dynamic_prompt" is not declared');
  else if (offered) report.add('prompt', 'pass', `static prompt, ${init.capability_params!.prompt!.static.length} characters`);
  else report.add('prompt', 'pass', y.dynamic_prompt ? 'dynamic prompt only' : 'no prompt (none declared)');
  return compatible;
}

/**
 * Probes beyond the host. First the notifications a live host sends mid-session, with
 * unchanged values (a config push, a workspace repoint, a trace event when `trace` is
 * declared), followed by `cancel` of an id never used: that round trip shows whether the
 * server took the notifications and kept running. Then an unknown method,
 * prompt/contribution and each hook.
 */
async function probeServer(client: YepClient, report: Report, manifest: Manifest, probeMs: number, init: { workspace_root: string; config: unknown }): Promise<void> {
  const y = manifest.yolop;
  const alive = (): boolean => client.running;
  if (!alive()) return;

  const sent = ['config/changed', 'workspace/changed'];
  client.notify('config/changed', { config: init.config });
  client.notify('workspace/changed', { workspace_root: init.workspace_root });
  if (y.trace) {
    sent.push('trace/event');
    client.notify('trace/event', { id: 'doctor-1', event_type: 'doctor.probe', session_id: 'doctor', ts: new Date().toISOString(), context: {}, data: {} });
  }
  let cancel: [CheckStatus, string];
  try {
    const outcome = await client.cancel(UNUSED_REQUEST_ID, { timeoutMs: probeMs, graceMs: 0 });
    if (!outcome.supported) cancel = ['pass', 'cancel not supported (answered -32601, allowed)'];
    else if (outcome.cancelled) cancel = ['warn', `claimed to cancel request ${UNUSED_REQUEST_ID}, which was never sent`];
    else cancel = ['pass', 'cancel of an unknown id answered {"cancelled": false}'];
  } catch (e) {
    cancel = ['fail', `cancel of an unknown id: ${describeFailure(e, client)}`];
  }
  if (!alive()) {
    report.add('notifications', 'fail', `after ${sent.join(', ')} the server ${describeExit(client)}`);
    return;
  }
  report.add('notifications', 'pass', `took ${sent.join(', ')} (unchanged values) and kept running`);
  report.add('cancel', ...cancel);

  if (!alive()) return;
  try {
    const r = await client.request(PROBE_METHOD, {}, { timeoutMs: probeMs });
    report.add('unknown_method', 'warn', `answered ${PROBE_METHOD} with success (${JSON.stringify(r)?.slice(0, 80)}); unknown methods should get error -32601`);
  } catch (e) {
    if (e instanceof YepRequestError && (e.kind === 'remote' || e.kind === 'cancelled')) {
      const code = e.remote?.code ?? 0;
      report.add('unknown_method', 'pass', `answered with error${code ? ` ${code}` : ''}${code !== ERROR_CODE.METHOD_NOT_FOUND ? ' (-32601 is the usual code)' : ''}`);
    } else report.add('unknown_method', 'fail', `an unknown method got no error answer: ${describeFailure(e, client)}`);
  }

  if (y.dynamic_prompt && alive()) {
    const t = Date.now();
    try {
      const raw = await client.request('prompt/contribution', {}, { timeoutMs: probeMs });
      const problems = payloadProblems('prompt/contribution', 'result', raw);
      const text = decodeLenient(PromptContribution, raw ?? {}).value.text;
      report.add('dynamic_prompt', problems.length ? 'fail' : 'pass', problems.length ? `invalid result: ${problems.join('; ')}` : `answered in ${ms(Date.now() - t)}, ${text.length} characters`);
    } catch (e) {
      report.add('dynamic_prompt', 'fail', `prompt/contribution: ${describeFailure(e, client)}`);
    }
  }

  if (y.hooks.length && alive()) {
    const results: string[] = [];
    let status: CheckStatus = 'pass';
    for (const hook of y.hooks) {
      if (!alive()) break;
      const line = await fireHook(client, hook);
      results.push(line.text);
      if (line.status === 'fail') status = 'fail';
    }
    report.add('hooks', status, results.join('; '));
  }
}

async function fireHook(client: YepClient, hook: HookDecl): Promise<{ status: CheckStatus; text: string }> {
  const label = `${hook.event} ${hook.tool_name_glob}`;
  const t = Date.now();
  try {
    const raw = await client.request('hook/fire', { event: hook.event, tool_name: sampleToolName(hook.tool_name_glob), args: {} }, { timeoutMs: hook.timeout_ms });
    const problems = payloadProblems('hook/fire', 'result', raw);
    if (problems.length) return { status: 'fail', text: `${label}: invalid decision: ${problems.join('; ')}` };
    const d = decodeLenient(HookDecision, raw ?? {}).value;
    return { status: 'pass', text: `${label}: ${d.block ? `blocks the synthetic call (${d.reason || 'no reason'})` : 'allow'} in ${ms(Date.now() - t)} (limit ${ms(hook.timeout_ms)})` };
  } catch (e) {
    const why = e instanceof YepRequestError && e.kind === 'timeout' ? `no answer within timeout_ms=${hook.timeout_ms} (the host would apply on_error=${hook.on_error})` : describeFailure(e, client);
    return { status: 'fail', text: `${label}: ${why}` };
  }
}

async function runCall(client: YepClient, report: Report, manifest: Manifest, init: InitializeResult, options: DoctorOptions, timeoutMs: number, secrets: string[]): Promise<DoctorCallReport> {
  const { tool, args } = options.call!;
  const out: DoctorCallReport = { tool, updates: [] };
  if (!manifest.yolop.tools.some((t) => t.name === tool)) {
    report.add('call', 'fail', `${tool} is not a tool in the manifest`);
    return out;
  }
  if (!(init.capability_params?.tools ?? []).some((t) => t.name === tool)) {
    report.add('call', 'fail', `${tool} is declared but this server run does not serve it`);
    return out;
  }
  if (!client.running) return out;
  const t = Date.now();
  try {
    const pending = client.callTool(tool, args, {
      toolCallId: 'doctor-call-1',
      timeoutMs,
      onUpdate: (u) => {
        const text = redactText(u.output, secrets);
        if (out.updates.length < 1000) out.updates.push(text);
        options.onUpdate?.(text);
      },
    });
    out.result = await pending.result;
    out.duration_ms = Date.now() - t;
    report.add('call', 'pass', `${tool} answered in ${ms(out.duration_ms)} with ${out.updates.length} streamed update(s)`);
  } catch (e) {
    out.duration_ms = Date.now() - t;
    out.error = describeFailure(e, client);
    report.add('call', 'fail', `${tool}: ${out.error}`);
  }
  return out;
}

/** Stop a run and grade it as `shutdown` (shutdown request first) or `stdin_eof` (EOF only). */
async function stopAndGrade(client: YepClient, report: Report, graceMs: number, as: 'shutdown' | 'stdin_eof'): Promise<StopReport> {
  const wasRunning = client.running;
  const r = await client.stop({ graceMs, shutdown: as === 'shutdown' });
  if (!wasRunning) {
    report.add(as, 'fail', `the server ${describeExit(client)} before ${as === 'shutdown' ? 'shutdown was sent' : 'stdin was closed'}`);
    return r;
  }
  const after = `after ${ms(r.durationMs)}`;
  if (as === 'shutdown') {
    const answered = r.shutdown === 'answered' ? 'answered shutdown' : r.shutdown === 'error' ? 'answered shutdown with an error' : 'did not answer shutdown';
    if (r.endedBy === 'shutdown' || r.endedBy === 'eof') {
      const how = r.endedBy === 'shutdown' ? 'exited' : 'exited once stdin closed';
      report.add('shutdown', r.shutdown === 'answered' ? 'pass' : 'warn', `${answered} and ${how} ${after}`);
    } else if (r.endedBy === 'sigterm') report.add('shutdown', 'fail', `${answered} but did not exit on it or on EOF; stopped by SIGTERM ${after}`);
    else report.add('shutdown', 'fail', `${answered} but did not exit on it, on EOF or on SIGTERM; killed with SIGKILL ${after}`);
  } else if (r.endedBy === 'eof') report.add('stdin_eof', 'pass', `exited on EOF ${after}`);
  else if (r.endedBy === 'sigterm') report.add('stdin_eof', 'fail', `kept running after stdin closed; stopped by SIGTERM ${after}`);
  else if (r.endedBy === 'sigkill') report.add('stdin_eof', 'fail', `kept running after stdin closed and ignored SIGTERM; killed with SIGKILL ${after}`);
  else report.add('stdin_eof', 'fail', `the server ${describeExit(client)}`);
  return r;
}

function gradeProcesses(report: Report, stops: StopReport[]): void {
  const leftovers = stops.flatMap((r) => r.leftovers);
  if (stops.some((r) => !r.groupGone)) report.add('processes', 'fail', "processes of the server's group survived SIGKILL");
  else if (leftovers.length) report.add('processes', 'fail', `the server exited but left ${leftovers.length} process(es) of its group running (pid ${leftovers.join(', ')}); doctor killed them`);
  else report.add('processes', 'pass', 'nothing left running (process group empty)');
}
