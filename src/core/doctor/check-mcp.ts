/**
 * The MCP servers an extension contributes (plugin.json `mcpServers`): each is
 * started or connected to as the host's MCP client would (mcp/mcp-launch.ts),
 * its tools listed with the official MCP SDK (mcp/probe.ts), and graded as
 * `mcp:<server>`. For an installed extension, what each server offered is
 * compared with what doctor saw last time (store/mcp-record.ts) and graded as
 * `mcp_changes:<server>`: a server can change the words the model gets without
 * any update of the package. Servers are probed side by side; each step has a
 * deadline and nothing a stdio server started outlives its probe.
 */
import type { Context } from '../context.js';
import type { Manifest } from '../package/manifest.js';
import { loadMcpRecord, saveMcpRecord, type McpRecord, type McpServerRecord } from '../store/mcp-record.js';
import { sanitize } from '../text/sanitize.js';
import { redactValue, truncateRedacted } from '../text/redact.js';
import { planMcpLaunch, type McpLaunch } from '../mcp/mcp-launch.js';
import { useProxy } from '../net/proxy.js';
import type { McpProbe } from '../mcp/probe.js';
import type { RunPermit } from '../binary/cargo-build.js';
import { inspectServerCommand } from '../package/inspect-command.js';
import { mayRunPackageCode } from '../policy/package-code.js';
import { mcpServerViolation } from '../policy/evaluate.js';
import type { Policy } from '../policy/policy-file.js';
import { declarationDigest, diffTools, noChanges, normalizeTools, type McpToolChanges } from '../mcp/tool-changes.js';
import { ms, type CheckStatus, type Report } from './report.js';

/** One contributed MCP server in doctor's JSON report (`mcp_servers`). */
export interface DoctorMcpServer {
  /** The key in plugin.json's `mcpServers`. */
  server: string;
  /** The name yolop gives it: `<extension>__<server>`. */
  host_name: string;
  transport: 'stdio' | 'http';
  /** True when it answered and listed its tools. */
  ok: boolean;
  /** The tools it offered (names, descriptions, input schemas; secrets redacted). */
  tools: { name: string; description: string; input_schema: unknown }[];
  /** What changed since `previous_run` (null: no earlier run recorded, not installed, or it did not answer). */
  changes: McpToolChanges | null;
  /** When doctor last recorded this server's tools (null: never). */
  previous_run: string | null;
}

export interface McpCheckInput {
  ctx: Context;
  report: Report;
  manifest: Manifest;
  /** Installed extensions get a record; a package directory does not. */
  installed: boolean;
  /** The package directory (what a stdio server's command is judged against). */
  packageDir: string;
  workspaceRoot: string;
  timeoutMs: number;
  probeMs: number;
  graceMs: number;
  /** The run's secrets; the servers' own are added to it. */
  secrets: string[];
  /** The policy, read once for the run (doctor.ts). */
  policy: Policy;
}

/** Tool names by MCP's naming rule (SEP-986): what MCP clients can rely on. */
const TOOL_NAME = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The proxy each HTTP server would be reached through, through the one proxy guard, before
 * anything is started: an unusable value is a configuration error naming its variable (exit 2)
 * at once, not after the capability server's checks have run their course.
 */
export function refuseUnusableMcpProxies(ctx: Context, manifest: Manifest, policy: Policy): void {
  for (const [server, decl] of Object.entries(manifest.yolop.mcpServers)) {
    // A server the policy refuses is never connected to: its proxy is not this run's to judge.
    if (decl.type !== 'http' || mcpServerViolation(policy, server)) continue;
    const { url } = planMcpLaunch(manifest.name, server, decl, ctx.env);
    // A URL that does not parse is the probe's to report, as a failed check of that server.
    if (url !== undefined && URL.canParse(url)) useProxy(new URL(url), ctx.env);
  }
}

/** Every declared server: probe, grade, compare, record. Returns the servers for the JSON report. */
export async function checkMcpServers(input: McpCheckInput): Promise<DoctorMcpServer[]> {
  const { ctx, report, manifest } = input;
  const launches = Object.entries(manifest.yolop.mcpServers).map(([server, decl]) => ({ decl, launch: planMcpLaunch(manifest.name, server, decl, ctx.env) }));
  for (const { launch } of launches) input.secrets.push(...launch.secrets);
  // A policy that admits no MCP servers: none is started or connected to, whatever its transport.
  const refusals = launches.map(({ launch }) => mcpServerViolation(input.policy, launch.server));
  // Each stdio server through the one resolver and the one guard before anything starts.
  const starts = await Promise.all(
    launches.map(({ launch }, i) => {
      const v = refusals[i];
      if (v)
        return {
          why: `${launch.transport === 'stdio' ? 'not started' : 'not connected to'}: refused by the policy in ${v.file} (${v.rule}): ${v.message}`,
          refused: true,
        };
      return launch.transport === 'stdio' ? mayStartStdio(input, launch) : undefined;
    }),
  );
  const { probeMcpServer } = await import('../mcp/probe.js');
  const probes = await Promise.all(
    launches.map(({ launch }, i) => {
      const start = starts[i];
      if (start && 'why' in start) return notStarted(start);
      return probeMcpServer(launch, {
        ...(start ? { stdio: start } : {}),
        workspaceRoot: input.workspaceRoot,
        env: ctx.env,
        timeoutMs: input.timeoutMs,
        probeMs: input.probeMs,
        graceMs: input.graceMs,
        secrets: input.secrets,
        signal: ctx.signal,
        spawn: ctx.spawn,
        clock: ctx.clock,
      });
    }),
  );
  const previous = input.installed ? loadMcpRecord(ctx.paths, manifest.name) : undefined;
  // The static prompt's record is the prompt check's (check-prompt-record.ts): kept as it is.
  const next: McpRecord = { format: 1, name: manifest.name, servers: {}, ...(previous?.prompt ? { prompt: previous.prompt } : {}) };
  const now = new Date(ctx.clock.now()).toISOString();
  const out: DoctorMcpServer[] = [];
  for (const [i, { decl, launch }] of launches.entries()) {
    const probe = probes[i] as McpProbe;
    gradeServer(report, launch, probe, input.secrets);
    // Redacted before anything keeps or compares them: a server may echo what it was given.
    const tools = redactValue(normalizeTools(probe.tools), input.secrets);
    const before = previous?.servers[launch.server];
    const entry: DoctorMcpServer = {
      server: launch.server,
      host_name: launch.hostName,
      transport: launch.transport,
      ok: probe.failure === undefined,
      tools,
      changes: null,
      previous_run: before?.seen_at ?? null,
    };
    out.push(entry);
    if (!input.installed) continue;
    if (probe.failure !== undefined) {
      // Nothing to compare: keep what was seen last, so a failing run does not hide a later change.
      if (before) next.servers[launch.server] = before;
      continue;
    }
    const record: McpServerRecord = { seen_at: now, version: manifest.version ?? null, declaration: declarationDigest(decl), tools };
    next.servers[launch.server] = record;
    entry.changes = before ? diffTools(before.tools, tools) : null;
    gradeChanges(report, manifest, launch, before, record, entry.changes, input.secrets);
  }
  if (input.installed) {
    try {
      await saveMcpRecord(ctx.paths, next);
    } catch (e) {
      report.add('mcp_record', 'warn', `could not save what the MCP servers offered, so the next run cannot compare: ${(e as Error).message}`);
    }
  }
  return out;
}

/**
 * May doctor start this stdio server, and which program: the one resolver with the host's
 * launch rule for MCP servers (from the workspace, the user's PATH, no package bin/), then
 * the one guard in front of package code (the policy's `server_outside_package`).
 */
async function mayStartStdio(input: McpCheckInput, launch: McpLaunch): Promise<{ program: string; permit: RunPermit } | { why: string; refused: boolean }> {
  const { ctx, manifest } = input;
  const command = launch.command ?? '';
  const resolved = await inspectServerCommand(input.packageDir, command, launch.env.PATH ?? ctx.env.PATH ?? '', {
    kind: 'mcp',
    server: launch.server,
    cwd: input.workspaceRoot,
  });
  const declared = manifest.yolop.mcpServers[launch.server]?.command ?? command;
  const verdict = await mayRunPackageCode(
    ctx,
    { kind: 'server', name: manifest.name, mcpServer: launch.server, command: declared, resolved },
    'run',
    input.policy,
  );
  if (verdict.run && resolved.ok) return { program: resolved.path, permit: verdict.permit };
  if (!verdict.run && verdict.ask) return { why: `${resolved.detail}; not started`, refused: true };
  // Refused by the policy, or a program that cannot start (the resolver says why and what to do).
  return { why: verdict.run ? resolved.detail : verdict.why, refused: !verdict.run && verdict.violation !== undefined };
}

/** The probe of a server that was not started: refused by the guard, or nothing that could start. */
function notStarted(start: { why: string; refused: boolean }): McpProbe {
  return {
    failure: start.why,
    notStarted: start.refused ? 'refused' : 'cannot-start',
    reached: 'start',
    tools: [],
    truncated: false,
    badLines: { count: 0, first: [] },
    durationMs: 0,
  };
}

function gradeServer(report: Report, launch: McpLaunch, p: McpProbe, secrets: readonly string[]): void {
  const name = `mcp:${launch.server}`;
  const where = launch.transport === 'stdio' ? `\`${launch.declared}\`` : launch.declared;
  const unsetNote = launch.unset.length
    ? `plugin.json uses ${launch.unset.map((v) => `\${${v}}`).join(', ')}, which ${launch.unset.length === 1 ? 'is' : 'are'} not set in your environment, so yolop passes ${launch.unset.length === 1 ? 'it' : 'them'} on as written: set ${launch.unset.join(', ')} before you start yolop`
    : '';
  const problems: string[] = [];
  let status: CheckStatus = 'pass';
  const fail = (text: string): void => {
    problems.push(text);
    status = 'fail';
  };
  const warn = (text: string): void => {
    problems.push(text);
    if (status === 'pass') status = 'warn';
  };
  let head: string;
  if (p.failure !== undefined) {
    status = 'fail';
    if (launch.transport === 'http')
      head =
        p.notStarted === 'refused'
          ? `did not connect to ${where}: ${p.failure.replace(/^not connected to: /, '')}`
          : p.reached === 'start'
            ? `cannot connect to ${where}: ${p.failure}`
            : `the server at ${where} ${p.failure}`;
    else if (p.notStarted === 'refused') head = `did not start ${where}: ${p.failure.replace(/^not started: /, '')}`;
    else if (p.notStarted === 'cannot-start') head = `could not start ${where}: ${p.failure}`;
    else if (p.pid === undefined) {
      head = `could not start ${where}: ${spawnFailure(p.failure)}`;
      problems.push("check the command in plugin.json: yolop runs it from your workspace with your PATH, not the package's bin/");
    } else {
      head = `started ${where}, but the server ${p.failure}`;
      const last = (p.stderrTail ?? '').trimEnd().split('\n').pop() ?? '';
      if (last.trim()) problems.push(`the last line it wrote to stderr: ${JSON.stringify(truncateRedacted(last.trim(), 160, secrets, { marker: () => '…' }))}`);
    }
  } else {
    const names = p.tools.map((t) => t.name);
    const shown = names.length > 8 ? `${names.slice(0, 8).join(', ')} and ${names.length - 8} more` : names.join(', ');
    const how = launch.transport === 'stdio' ? `started ${where}` : `connected to ${where}`;
    head = `${how} and listed ${names.length} tool${names.length === 1 ? '' : 's'}${names.length ? ` (${shown})` : ''} in ${ms(p.durationMs)}; yolop calls this server ${launch.hostName}`;
    const dupes = [...new Set(names.filter((n, i) => names.indexOf(n) !== i))];
    if (dupes.length) fail(`it lists ${dupes.join(', ')} more than once: give each tool its own name`);
    const badNames = names.filter((n) => !TOOL_NAME.test(n));
    if (badNames.length)
      warn(
        `${badNames.length === 1 ? 'the tool name' : 'the tool names'} ${badNames.map((n) => JSON.stringify(n)).join(', ')} ${badNames.length === 1 ? 'breaks' : 'break'} MCP's naming rule (1 to 128 of A-Z a-z 0-9 _ - .), which some clients enforce: rename ${badNames.length === 1 ? 'it' : 'them'}`,
      );
    if (names.length === 0) warn('it offers no tools, so the model gets nothing from it');
    if (p.truncated) warn(`it kept paging its tool list; doctor stopped after ${names.length} tools`);
  }
  if (unsetNote) warn(unsetNote);
  if (p.badLines.count > 0)
    warn(
      `it wrote ${p.badLines.count === 1 ? 'a line' : `${p.badLines.count} lines`} on stdout that ${p.badLines.count === 1 ? 'is not an MCP message' : 'are not MCP messages'} (first: ${JSON.stringify(p.badLines.first[0] ?? '')}): keep stdout for MCP messages and log to stderr`,
    );
  const stop = p.stop;
  if (stop) {
    const leftovers = [...stop.descendants, ...stop.survivors];
    if (stop.survivors.length || !stop.groupGone) fail(`processes it started survived SIGKILL: ${leftovers.map((l) => `pid ${l.pid}`).join(', ')}`);
    else if (stop.descendants.length)
      fail(
        `it left ${stop.descendants.length} process${stop.descendants.length === 1 ? '' : 'es'} running after it stopped (${stop.descendants
          .slice(0, 3)
          .map((l) => `pid ${l.pid} ${truncateRedacted(l.command, 60, secrets, { marker: () => '…' })}`)
          .join(', ')}); doctor killed ${stop.descendants.length === 1 ? 'it' : 'them'}: wait for your child processes before exiting`,
      );
    if (p.failure === undefined && (stop.endedBy === 'sigterm' || stop.endedBy === 'sigkill'))
      warn(
        `it did not exit when its input was closed (stopped with ${stop.endedBy === 'sigterm' ? 'SIGTERM' : 'SIGKILL'}): exit when stdin closes, as MCP's stdio transport asks`,
      );
  }
  report.add(name, status, [head, ...problems].join('; '));
}

/** Why a stdio server did not start, from its spawn error (`could not be started (ENOENT)`). */
function spawnFailure(failure: string): string {
  const code = /could not be started \(([A-Z0-9_]+)\)/.exec(failure)?.[1];
  if (code === 'ENOENT') return 'the program was not found (ENOENT)';
  if (code === 'EACCES') return 'the program is not executable (EACCES)';
  if (code === 'ENOEXEC') return 'the file is not a program this system can run (ENOEXEC)';
  return `the server ${failure}`;
}

function gradeChanges(
  report: Report,
  manifest: Manifest,
  launch: McpLaunch,
  before: McpServerRecord | undefined,
  after: McpServerRecord,
  changes: McpToolChanges | null,
  secrets: readonly string[],
): void {
  const name = `mcp_changes:${launch.server}`;
  const count = `${after.tools.length} tool${after.tools.length === 1 ? '' : 's'}`;
  if (!before || !changes) {
    report.add(name, 'pass', `first look: recorded ${count}; from now on doctor reports any change to their names, descriptions or input schemas`);
    return;
  }
  const when = before.seen_at.slice(0, 10);
  if (noChanges(changes)) {
    report.add(name, 'pass', `the same ${count} as on ${when}`);
    return;
  }
  const quote = (s: string): string => JSON.stringify(sanitize(truncateRedacted(s, 80, secrets, { marker: () => '…' })));
  const parts = [
    ...changes.added.map((t) => `new tool ${t}`),
    ...changes.removed.map((t) => `tool ${t} is gone`),
    ...changes.described.map((d) => `${d.name}'s description changed from ${quote(d.before)} to ${quote(d.after)}`),
    ...changes.schema.map((t) => `${t}'s input schema changed`),
  ];
  const why =
    before.declaration === after.declaration
      ? `plugin.json declares this server exactly as before${before.version === after.version ? '' : ` (the package moved from ${before.version ?? 'no version'} to ${after.version ?? 'no version'})`}, so the server itself changed what the model is told`
      : `plugin.json changed how this server is started${before.version === after.version ? '' : ` (${before.version ?? 'no version'} -> ${after.version ?? 'no version'})`}`;
  report.add(name, 'warn', `since ${when}: ${parts.join('; ')}. ${why}. Read the change; if you did not expect it, run \`yep-ext disable ${manifest.name}\``);
}
