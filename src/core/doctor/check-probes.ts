/**
 * Probes beyond the host, one function per check group, on a server that
 * passed the handshake: `notifications` and `cancel` (a live host's mid-session
 * notifications, then `cancel` of an id never used), `unknown_method`,
 * `dynamic_prompt`, `hooks`, and the optional `call` (--call). Text the server
 * sends back is quoted only through truncateRedacted.
 */
import type { HookDecl, Manifest } from '../package/manifest.js';
import { truncateRedacted, redactText } from '../text/redact.js';
import { YepRequestError, type YepClient } from '../yep/client.js';
import { ERROR_CODE, HookDecision, PromptContribution, type InitializeResult } from '../yep/protocol.js';
import { decodeLenient, payloadProblems } from '../yep/validate.js';
import { describeExit, describeFailure, ms, type CheckStatus, type DoctorCallReport, type Report } from './report.js';

const PROBE_METHOD = 'doctor/no-such-method';
const UNUSED_REQUEST_ID = 999_999;

export interface ProbeContext {
  client: YepClient;
  report: Report;
  manifest: Manifest;
  probeMs: number;
  secrets: readonly string[];
}

/** Every probe group in order; each is skipped once the server is gone. */
export async function probeServer(p: ProbeContext, init: { workspace_root: string; config: unknown }): Promise<void> {
  if (!p.client.running) return;
  if (!(await checkNotifications(p, init))) return;
  if (p.client.running) await checkUnknownMethod(p);
  if (p.manifest.yolop.dynamic_prompt && p.client.running) await checkDynamicPrompt(p);
  if (p.manifest.yolop.hooks.length && p.client.running) await checkHooks(p);
}

/**
 * `notifications` and `cancel`: the notifications a live host sends mid-session,
 * with unchanged values (a config push, a workspace repoint, a trace event when
 * `trace` is declared), then `cancel` of an id never used, whose round trip
 * shows the server took them and kept running. False when the server is gone.
 */
async function checkNotifications({ client, report, manifest, probeMs }: ProbeContext, init: { workspace_root: string; config: unknown }): Promise<boolean> {
  const sent = ['config/changed', 'workspace/changed'];
  client.notify('config/changed', { config: init.config });
  client.notify('workspace/changed', { workspace_root: init.workspace_root });
  if (manifest.yolop.trace) {
    sent.push('trace/event');
    client.notify('trace/event', { id: 'doctor-1', event_type: 'doctor.probe', session_id: 'doctor', ts: new Date().toISOString(), context: {}, data: {} });
  }
  let cancel: [CheckStatus, string];
  try {
    const outcome = await client.cancel(UNUSED_REQUEST_ID, { timeoutMs: probeMs, graceMs: 0 });
    if (!outcome.supported) cancel = ['pass', 'does not support cancelling (answered error -32601, "method not found"), which is allowed'];
    else if (outcome.cancelled)
      cancel = ['warn', `claimed to cancel request ${UNUSED_REQUEST_ID}, which yolop never sent: answer {"cancelled": false} for a request you do not know`];
    else cancel = ['pass', 'answered {"cancelled": false} when asked to cancel a request it never got'];
  } catch (e) {
    cancel = [
      'fail',
      `asked to cancel a request it never got: ${describeFailure(e, client)}; answer {"cancelled": false}, or error -32601 if you do not support cancelling`,
    ];
  }
  if (!client.running) {
    report.add(
      'notifications',
      'fail',
      `the server ${describeExit(client)} after yolop's routine updates (${sent.join(', ')}): take the updates you do not handle and keep running`,
    );
    return false;
  }
  report.add('notifications', 'pass', `kept running after yolop's routine updates (${sent.join(', ')}, with unchanged values)`);
  report.add('cancel', ...cancel);
  return true;
}

/** `unknown_method`: a method nobody defines must get an error answer. */
async function checkUnknownMethod({ client, report, probeMs, secrets }: ProbeContext): Promise<void> {
  try {
    const r = await client.request(PROBE_METHOD, {}, { timeoutMs: probeMs });
    const excerpt = truncateRedacted(JSON.stringify(r) ?? 'null', 80, secrets, { marker: () => '…' });
    report.add(
      'unknown_method',
      'warn',
      `answered a request for a method that does not exist (${PROBE_METHOD}) as if it succeeded (${excerpt}): answer unknown methods with error -32601 ("method not found")`,
    );
  } catch (e) {
    if (e instanceof YepRequestError && (e.kind === 'remote' || e.kind === 'cancelled')) {
      const code = e.remote?.code ?? 0;
      report.add(
        'unknown_method',
        'pass',
        `a request for a method that does not exist got an error answer${code ? ` (${code})` : ''}${code !== ERROR_CODE.METHOD_NOT_FOUND ? '; -32601 ("method not found") is the usual code' : ''}`,
      );
    } else
      report.add(
        'unknown_method',
        'fail',
        `a request for a method that does not exist got no error answer (${describeFailure(e, client)}): answer unknown methods with error -32601, as yolop waits for an answer to every request`,
      );
  }
}

/** `dynamic_prompt`: prompt/contribution answers with a valid result in time. */
async function checkDynamicPrompt({ client, report, probeMs }: ProbeContext): Promise<void> {
  const t = Date.now();
  try {
    const raw = await client.request('prompt/contribution', {}, { timeoutMs: probeMs });
    const problems = payloadProblems('prompt/contribution', 'result', raw);
    const text = decodeLenient(PromptContribution, raw ?? {}).value.text;
    report.add(
      'dynamic_prompt',
      problems.length ? 'fail' : 'pass',
      problems.length
        ? `the answer to prompt/contribution is not {"text": "…"} (${problems.join('; ')})`
        : `answered prompt/contribution in ${ms(Date.now() - t)} with ${text.length} characters`,
    );
  } catch (e) {
    report.add('dynamic_prompt', 'fail', `prompt/contribution (plugin.json declares "dynamic_prompt"): ${describeFailure(e, client)}`);
  }
}

/** `hooks`: each declared hook fired once with a synthetic call, within its own timeout_ms. */
async function checkHooks({ client, report, manifest, secrets }: ProbeContext): Promise<void> {
  const results: string[] = [];
  let status: CheckStatus = 'pass';
  for (const hook of manifest.yolop.hooks) {
    if (!client.running) break;
    const line = await fireHook(client, hook, secrets);
    results.push(line.text);
    if (line.status === 'fail') status = 'fail';
  }
  report.add('hooks', status, results.join('; '));
}

function sampleToolName(glob: string): string {
  return glob.replace(/\*/g, 'doctor_probe') || 'doctor_probe';
}

/**
 * What yolop does when a hook fails (no answer in time, an error, a reply that is not a
 * decision): a `pre_tool_use` hook's `on_error` decides (host 0.18, extensions/hooks.rs:
 * `block` blocks the call, `warn` lets it go ahead); a `post_tool_use` hook's failure is
 * only logged.
 */
function onFailure(hook: HookDecl): string {
  if (hook.event === 'post_tool_use') return 'yolop would log the hook as failed';
  return hook.on_error === 'block'
    ? 'yolop would treat that as a failed hook and, with on_error=block, block the tool call'
    : 'yolop would treat that as a failed hook and, with on_error=warn, let the tool call go ahead unchecked';
}

async function fireHook(client: YepClient, hook: HookDecl, secrets: readonly string[]): Promise<{ status: CheckStatus; text: string }> {
  const label = `${hook.event} ${hook.tool_name_glob}`;
  const t = Date.now();
  try {
    const raw = await client.request(
      'hook/fire',
      { event: hook.event, tool_name: sampleToolName(hook.tool_name_glob), args: {} },
      { timeoutMs: hook.timeout_ms },
    );
    const problems = payloadProblems('hook/fire', 'result', raw);
    if (problems.length) {
      const got = truncateRedacted(JSON.stringify(raw) ?? 'nothing', 80, secrets, { marker: () => '…' });
      return {
        status: 'fail',
        text: `${label}: the reply ${got} is not a hook decision (${problems.join('; ')}); ${onFailure(hook)}. Answer {} to allow, or {"block": true, "reason": "…"} to block`,
      };
    }
    const d = decodeLenient(HookDecision, raw ?? {}).value;
    return {
      status: 'pass',
      text: `${label}: ${d.block ? `blocks the sample call (${d.reason || 'no reason given'})` : 'allows the sample call'} in ${ms(Date.now() - t)} (limit ${ms(hook.timeout_ms)})`,
    };
  } catch (e) {
    const why =
      e instanceof YepRequestError && e.kind === 'timeout'
        ? `no answer within its timeout_ms=${hook.timeout_ms}; ${onFailure(hook).replace(/^yolop would treat that as a failed hook/, 'yolop would treat it as a failed hook')}`
        : e instanceof YepRequestError && e.kind === 'remote'
          ? `${describeFailure(e, client)}; ${onFailure(hook)}`
          : describeFailure(e, client);
    return { status: 'fail', text: `${label}: ${why}` };
  }
}

/**
 * `ui_ask` (when the server asked, or the manifest declares it): yolop shows a server's
 * question (`ui/ask`) only when plugin.json declares `ui_ask`, and ignores it otherwise,
 * so a server that asks without declaring it waits for an answer that never comes from
 * the user. Doctor has no one to ask and answers `cancelled`, as yolop does without a
 * prompt surface.
 */
export function checkUiAsk(report: Report, manifest: Manifest, prompts: readonly unknown[], secrets: readonly string[]): void {
  if (prompts.length === 0) return;
  // Each start of the server may ask the same question: count the questions, not the asks.
  const distinct = [...new Set(prompts.map((p) => String(p ?? '')))];
  const first = truncateRedacted(distinct[0] ?? '', 80, secrets, { marker: () => '…' });
  const asked = `the server asked the user ${distinct.length === 1 ? 'a question' : `${distinct.length} questions`} (ui/ask${distinct.length === 1 ? '' : ', first'}: ${JSON.stringify(first)})`;
  if (!manifest.yolop.ui_ask)
    report.add(
      'ui_ask',
      'fail',
      `${asked}, but plugin.json does not declare "ui_ask": yolop ignores questions from such a server, so it would wait for an answer the user never sees. Add "ui_ask": true to the yolop block of plugin.json, or stop asking`,
    );
  else report.add('ui_ask', 'pass', `${asked}; doctor answered "cancelled", as yolop does when no one can answer`);
}

/** `call` (--call): one tool call, its streamed updates (redacted) and its result. */
export async function runCall(
  { client, report, manifest, secrets }: ProbeContext,
  init: InitializeResult,
  call: { tool: string; args: unknown },
  timeoutMs: number,
  onUpdate?: (output: string) => void,
): Promise<DoctorCallReport> {
  const { tool, args } = call;
  const out: DoctorCallReport = { tool, updates: [] };
  if (!manifest.yolop.tools.some((t) => t.name === tool)) {
    report.add('call', 'fail', `${tool} is not a tool plugin.json lists`);
    return out;
  }
  if (!(init.capability_params?.tools ?? []).some((t) => t.name === tool)) {
    report.add('call', 'fail', `plugin.json lists ${tool}, but the server does not offer it`);
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
        onUpdate?.(text);
      },
    });
    out.result = await pending.result;
    out.duration_ms = Date.now() - t;
    report.add('call', 'pass', `${tool} answered in ${ms(out.duration_ms)}, after ${out.updates.length} progress update(s)`);
  } catch (e) {
    out.duration_ms = Date.now() - t;
    out.error = describeFailure(e, client);
    report.add('call', 'fail', `${tool}: ${out.error}`);
  }
  return out;
}
