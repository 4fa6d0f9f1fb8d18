/**
 * `yep-ext doctor`: spawn an extension's server the way the host does, drive it
 * through the protocol and grade what it does. The host's doctor (host-compat
 * §9) is the floor: same check names and JSON shape for what it checks, plus
 * config injection, schema validation of every message, probes of the error,
 * cancel, prompt and hook paths, a real graceful stop, an EOF-only stop and a
 * check that nothing the server started is left running. Every wait is bounded,
 * and everything the server started is gone when this returns or throws.
 *
 * This module resolves the target and runs the check groups in order; each
 * group is one function in check-setup.ts (manifest, config, command),
 * check-handshake.ts, check-probes.ts (notifications, cancel, unknown_method,
 * dynamic_prompt, hooks, call) and check-stop.ts (shutdown, stdin_eof, messages,
 * processes). Secrets injected into the server are redacted from the whole
 * report, and from every excerpt before it is cut (text/redact.ts).
 */
import { loadPolicy } from '../policy/load-policy.js';
import { existsSync, type Stats, statSync } from 'node:fs';
import { basename } from 'node:path';
import type { DoctorTarget } from './target.js';
import { resolveExtensionName } from '../store/installed-name.js';
import type { Context } from '../context.js';
import { YepError } from '../errors.js';
import type { Manifest } from '../package/manifest.js';
import { packageDir } from '../paths.js';
import { notInstalled, notInstalledHere } from '../store/installed-manifest.js';
import { proxyCredentials } from '../net/proxy.js';
import { redactValue } from '../text/redact.js';
import type { ServerConfig, ConfigInjection } from '../settings/server-config.js';
import type { CommandInspection } from '../package/inspect-command.js';
import { YepClient, type StopReport } from '../yep/client.js';
import type { EarlyServers } from '../yep/early-server.js';
import { PROTOCOL_VERSION, type InitializeResult } from '../yep/protocol.js';
import { enginesCheck } from './engines-check.js';
import { checkCommand, checkConfig, checkManifest, missingConfigNote } from './check-setup.js';
import { gradeHandshake } from './check-handshake.js';
import { checkUiAsk, probeServer, runCall, type ProbeContext } from './check-probes.js';
import { checkMessages, checkProcesses, stopAndGrade } from './check-stop.js';
import { Report, describeExit, describeFailure, ms, type DoctorCallReport, type DoctorReport } from './report.js';
import { withStep } from '../log.js';
import { DEFAULT_HANDSHAKE_TIMEOUT_MS } from './defaults.js';
import type { DoctorMcpServer } from './check-mcp.js';

export type { DoctorCheck, DoctorReport } from './report.js';

export { parseDoctorTarget } from './target.js';

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
  /** Grace period for each stop step (default ctx.waits.doctorGraceMs, 2 s). */
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
  /**
   * Servers already started by the CLI for this target (early-server.ts): each run
   * (the first, then the EOF-only second) adopts the next one when its spawn is
   * exactly the one doctor would make; the rest, and any that does not match, are
   * killed and reaped before this returns (as when no server is spawned at all).
   */
  earlyServer?: EarlyServers;
}

async function resolveTarget(ctx: Context, target: DoctorTarget): Promise<{ dir: string; source: 'installed' | 'path'; wanted?: string }> {
  if (target.kind === 'installed') {
    target = { ...target, name: resolveExtensionName(ctx.paths, target.raw ?? target.name) };
    const dir = packageDir(ctx.paths, target.name);
    if (!existsSync(dir)) {
      const name = target.name;
      // A name the lock pins whose package is gone is said so, with the install that restores it (as enable says it).
      throw await notInstalledHere(ctx.paths, name, () =>
        notInstalled(name, `Run \`yep-ext list\` to see what is installed; to check a package directory, pass a path such as ./${name}.`),
      );
    }
    return { dir, source: 'installed', wanted: target.name };
  }
  let st: Stats;
  try {
    st = statSync(target.dir);
  } catch {
    throw new YepError('E_NOT_FOUND', `No such directory: ${target.dir}.`, { hint: 'Pass the package directory (the one holding plugin.json).' });
  }
  if (!st.isDirectory())
    throw new YepError('E_USAGE', `${target.dir} is not a directory.`, { hint: 'Pass the package directory (the one holding plugin.json).' });
  return { dir: target.dir, source: 'path' };
}

/** One doctor run: what every check group reads and adds to. */
interface Run {
  ctx: Context;
  options: DoctorOptions;
  report: Report;
  clients: YepClient[];
  secrets: string[];
  /** The prompts of the `ui/ask` requests the server sent, in every run. */
  asks: unknown[];
  /** The static prompt text the server sent in its handshake ('' for none); undefined when it never answered. */
  staticPrompt?: string;
  timeoutMs: number;
  probeMs: number;
  graceMs: number;
}

/** Run every check and return the report. Throws only for a bad target or an interrupt. */
export async function runDoctor(ctx: Context, options: DoctorOptions): Promise<DoctorReport> {
  try {
    return await doctorRun(ctx, options);
  } finally {
    // Adopted (then the runs' own clean-up has it) or killed and reaped here.
    await options.earlyServer?.discard();
  }
}

async function doctorRun(ctx: Context, options: DoctorOptions): Promise<DoctorReport> {
  const t0 = Date.now();
  const { dir, source, wanted } = await resolveTarget(ctx, options.target);
  const timeoutMs = options.timeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
  const run: Run = {
    ctx,
    options,
    report: new Report(),
    clients: [],
    secrets: [],
    asks: [],
    timeoutMs,
    probeMs: options.probeTimeoutMs ?? Math.min(5000, timeoutMs),
    graceMs: options.graceMs ?? ctx.waits.doctorGraceMs,
  };
  let name = wanted ?? basename(dir);
  let call: DoctorCallReport | undefined;
  let mcp: DoctorMcpServer[] | undefined;
  const finish = (): DoctorReport => {
    const { report, clients } = run;
    const problems = clients.flatMap((c, i) => c.problems.map((p) => `${clients.length > 1 ? `run ${i + 1} ` : ''}#${p.seq}: ${p.text}`));
    const tail = clients
      .map((c) => c.stderrTail())
      .filter((t) => t.trim() !== '')
      .join('\n--- second run ---\n');
    const out: DoctorReport = {
      name,
      ok: !report.failed,
      checks: report.checks,
      package_dir: dir,
      source,
      ...(report.failed && tail ? { stderr_tail: tail } : {}),
      ...(call ? { call } : {}),
      ...(mcp ? { mcp_servers: mcp } : {}),
      problems,
      server_pids: clients.flatMap((c) => (c.pid === undefined ? [] : [c.pid])),
      duration_ms: Date.now() - t0,
    };
    return redactValue(out, run.secrets);
  };

  const manifest = await checkManifest(run.report, dir, wanted);
  if (!manifest) return finish();
  name = manifest.name;
  const engines = await enginesCheck(ctx, manifest);
  if (engines) run.report.add(engines.name, engines.status, engines.detail);
  const loaded = options.noConfig || !options.loadConfig ? undefined : await options.loadConfig(manifest.name, manifest);
  const injection = checkConfig(run.report, manifest, loaded, options.noConfig === true);
  // What the server is handed and may echo: its config secrets, and the proxy credentials in the environment it inherits.
  run.secrets = [...(options.noConfig ? [] : injection.secretValues), ...proxyCredentials(ctx.env)];
  const mcpCheck = Object.keys(manifest.yolop.mcpServers).length > 0 ? await import('./check-mcp.js') : undefined;
  // Read once for the run: every MCP server is judged by the same policy.
  const policy = mcpCheck ? loadPolicy(ctx) : undefined;
  if (mcpCheck && policy) mcpCheck.refuseUnusableMcpProxies(ctx, manifest, policy);
  const command = await checkCommand(ctx, run.report, dir, manifest);
  try {
    if (command) call = await runServer(run, { dir, manifest, injection, command });
    if (source === 'installed' && run.staticPrompt !== undefined && (manifest.yolop.prompt || run.staticPrompt !== ''))
      await (await import('./check-prompt-record.js')).checkPromptRecord(ctx, run.report, manifest, run.staticPrompt, run.secrets);
    // The MCP servers do not depend on the capability server: the host starts them on their own.
    if (mcpCheck && policy) {
      mcp = await mcpCheck
        .checkMcpServers({
          ctx,
          report: run.report,
          manifest,
          installed: source === 'installed',
          packageDir: dir,
          workspaceRoot: options.workspaceRoot,
          timeoutMs: run.timeoutMs,
          probeMs: run.probeMs,
          graceMs: run.graceMs,
          secrets: run.secrets,
          policy,
        })
        .catch((e: unknown) => {
          interruptedIfAborted(run);
          throw e;
        });
      interruptedIfAborted(run);
    }
    return finish();
  } finally {
    // Whatever happened above (including an exception), nothing outlives doctor.
    for (const c of run.clients) c.kill();
    await Promise.all(run.clients.map((c) => c.stop({ graceMs: 0, shutdown: false }).catch(() => undefined)));
  }
}

interface ServerPlan {
  dir: string;
  manifest: Manifest;
  injection: ConfigInjection;
  command: Extract<CommandInspection, { ok: true }>;
}

/**
 * `spawn`, `handshake` and everything after it: two runs of the server (the second
 * stopped by EOF only). The two runs are independent, so the second starts once
 * the first has answered initialize and overlaps the first's probes and shutdown
 * instead of following them: two server starts in a row were most of doctor's time.
 * Not earlier, when doctor spawns them itself: the first handshake's timeout is the
 * host's, and a second server starting beside it on a loaded machine could make it
 * miss that. (`doctor <dir>`'s early start, doctor-early.ts, spawns both at once
 * before doctor's code loads, trading that for the overlap; each handshake is then
 * timed from its own spawn.) The second run's check is added after `shutdown`,
 * where it always was.
 */
async function runServer(run: Run, plan: ServerPlan): Promise<DoctorCallReport | undefined> {
  const { report, options } = run;
  const y = plan.manifest.yolop;
  const initParams = { protocol_version: PROTOCOL_VERSION, session_id: 'doctor', workspace_root: options.workspaceRoot, config: plan.injection.initConfig };
  const stops: StopReport[] = [];
  let call: DoctorCallReport | undefined;

  const client = startClient(run, plan);
  if (!(await client.spawned)) {
    report.add('spawn', 'fail', `the server ${describeExit(client)}${missingConfigNote(plan.injection)}`);
    return undefined;
  }
  report.add('spawn', 'pass', `started as pid ${client.pid} (${[y.capabilityServer.command, ...y.capabilityServer.args].join(' ')})`);

  const init = await checkHandshake(run, client, initParams, plan.injection);
  if (init) run.staticPrompt = typeof init.capability_params?.prompt?.static === 'string' ? init.capability_params.prompt.static : '';
  if (init) {
    const eofReport = new Report();
    const second = startClient(run, plan);
    const eof = checkStdinEof(run, second, eofReport, initParams);
    eof.catch(() => undefined);
    if (gradeHandshake(report, plan.manifest, init)) {
      const probe: ProbeContext = { client, report, manifest: plan.manifest, probeMs: run.probeMs, secrets: run.secrets };
      await probeServer(probe, initParams);
      if (options.call) call = await runCall(probe, init, options.call, run.timeoutMs, options.onUpdate);
    }
    interruptedIfAborted(run);
    stops.push(await stopAndGrade(client, report, run.graceMs, 'shutdown'));
    interruptedIfAborted(run);
    stops.push(await eof);
    report.checks.push(...eofReport.checks);
  } else {
    stops.push(await client.stop({ graceMs: run.graceMs }));
  }
  interruptedIfAborted(run);
  checkUiAsk(report, plan.manifest, run.asks, run.secrets);
  checkMessages(report, run.clients);
  checkProcesses(report, stops, run.secrets);
  return call;
}

function startClient(run: Run, plan: ServerPlan): YepClient {
  const { ctx, options } = run;
  const c = YepClient.start(
    {
      command: plan.command.path,
      args: plan.manifest.yolop.capabilityServer.args,
      packageDir: plan.dir,
      workspaceRoot: options.workspaceRoot,
      env: ctx.env,
      injectedEnv: plan.injection.env,
    },
    {
      ...(options.earlyServer ? { adopt: options.earlyServer } : {}),
      requestTimeoutMs: run.probeMs,
      ...(options.maxLineBytes ? { maxLineBytes: options.maxLineBytes } : {}),
      stderrTailBytes: options.stderrTailBytes ?? 4096,
      secrets: run.secrets,
      signal: ctx.signal,
      spawn: ctx.spawn,
      clock: ctx.clock,
      onMessage: (rec) => {
        if (rec.direction === 'in' && rec.kind === 'request' && rec.method === 'ui/ask')
          run.asks.push((rec.message as { params?: { prompt?: unknown } } | undefined)?.params?.prompt ?? '');
      },
    },
  );
  run.clients.push(c);
  return c;
}

/** What is left of `timeoutMs` counted from `since` (Date.now() time), at least 1 ms. */
function remainingFrom(since: number, timeoutMs: number): number {
  return Math.max(1, timeoutMs - (Date.now() - since));
}

/** `handshake`: initialize answered within the timeout. */
async function checkHandshake(
  run: Run,
  client: YepClient,
  initParams: Record<string, unknown>,
  injection: ConfigInjection,
): Promise<InitializeResult | undefined> {
  // The host writes initialize as it spawns, and its timeout runs from there. A server
  // started early (doctor-early.ts) has been starting since its spawn: time it from then,
  // or doctor would pass a server the host gives up on.
  const t = client.earlyStartedAt ?? Date.now();
  try {
    const init = await withStep(
      run.ctx.log,
      `Waiting for the server (pid ${client.pid}) to answer initialize`,
      () => client.initialize(initParams, { timeoutMs: remainingFrom(t, run.timeoutMs) }),
      {
        deadlineAt: t + run.timeoutMs,
      },
    );
    run.report.add('handshake', 'pass', `answered yolop's first request (initialize) in ${ms(Date.now() - t)}`);
    return init;
  } catch (e) {
    interruptedIfAborted(run);
    run.report.add('handshake', 'fail', `no answer to yolop's first request (initialize): ${describeFailure(e, client)}${missingConfigNote(injection)}`);
    return undefined;
  }
}

/** `stdin_eof`: a second, short run, stopped by closing stdin only (the host may stop a server that way). */
async function checkStdinEof(run: Run, second: YepClient, report: Report, initParams: Record<string, unknown>): Promise<StopReport> {
  if (!(await second.spawned)) {
    report.add('stdin_eof', 'fail', `started a second time (to be stopped by closing its input), the server ${describeExit(second)}`);
    return second.stop({ graceMs: run.graceMs });
  }
  try {
    await second.initialize(initParams, { timeoutMs: remainingFrom(second.earlyStartedAt ?? Date.now(), run.timeoutMs) });
  } catch (e) {
    interruptedIfAborted(run);
    report.add('stdin_eof', 'fail', `started a second time (to be stopped by closing its input), no answer to initialize: ${describeFailure(e, second)}`);
    return second.stop({ graceMs: run.graceMs });
  }
  return stopAndGrade(second, report, run.graceMs, 'stdin_eof');
}

/** Ctrl-C: kill every run now and stop with E_INTERRUPTED. */
function interruptedIfAborted(run: Run): void {
  if (!run.ctx.signal.aborted) return;
  for (const c of run.clients) c.kill();
  throw new YepError('E_INTERRUPTED', 'Interrupted: the server was stopped.');
}
