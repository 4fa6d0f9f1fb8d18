/**
 * Grading the `initialize` answer by the host's rules (host-compat §9): one
 * function per check (`protocol_version`, `name`, `capabilities`, `tools`,
 * `prompt`), run in that order by gradeHandshake.
 */
import type { Manifest } from '../package/manifest.js';
import { CAPABILITY_TOKENS, PROTOCOL_VERSION, type InitializeResult } from '../yep/protocol.js';
import { checkCompatibility } from '../yep/version.js';
import type { Report } from './report.js';

/** Every handshake check. Returns false when the majors differ (the host would refuse the server). */
export function gradeHandshake(report: Report, manifest: Manifest, init: InitializeResult): boolean {
  const compatible = checkProtocolVersion(report, init);
  checkName(report, manifest, init);
  checkCapabilities(report, manifest, init);
  checkTools(report, manifest, init);
  checkPrompt(report, manifest, init);
  return compatible;
}

function checkProtocolVersion(report: Report, init: InitializeResult): boolean {
  if (init.protocol_version === '') {
    report.add('protocol_version', 'warn', `the server did not state protocol_version (the host speaks ${PROTOCOL_VERSION})`);
    return true;
  }
  const c = checkCompatibility(init.protocol_version);
  if (!c.compatible) {
    report.add('protocol_version', 'fail', `server speaks ${JSON.stringify(init.protocol_version)}: ${c.reason}; the host refuses it`);
    return false;
  }
  report.add('protocol_version', 'pass', `${init.protocol_version} (host ${PROTOCOL_VERSION})${c.note ? `; ${c.note}` : ''}`);
  return true;
}

function checkName(report: Report, manifest: Manifest, init: InitializeResult): void {
  if (init.name === '') report.add('name', 'warn', `the server did not state its name (manifest: ${manifest.name})`);
  else if (init.name !== manifest.name)
    report.add('name', 'warn', `server calls itself ${JSON.stringify(init.name)}, the manifest says ${JSON.stringify(manifest.name)}`);
  else report.add('name', 'pass', init.name);
}

function checkCapabilities(report: Report, manifest: Manifest, init: InitializeResult): void {
  const y = manifest.yolop;
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
  const detail = [`advertised: ${init.capabilities.length ? init.capabilities.join(', ') : '(none)'}`];
  if (undeclared.length) detail.push(`not declared in the manifest, so the host ignores them: ${undeclared.join(', ')}`);
  if (unknown.length) detail.push(`unknown tokens (ignored): ${unknown.join(', ')}`);
  report.add('capabilities', undeclared.length ? 'warn' : 'pass', detail.join('; '));
}

function checkTools(report: Report, manifest: Manifest, init: InitializeResult): void {
  const servedList = init.capability_params?.tools;
  const served = (servedList ?? []).map((t) => t.name);
  const manifestTools = new Set(manifest.yolop.tools.map((t) => t.name));
  const extra = served.filter((t) => !manifestTools.has(t));
  const unserved = [...manifestTools].filter((t) => !served.includes(t));
  const dupes = served.filter((t, i) => served.indexOf(t) !== i);
  if (extra.length) {
    report.add(
      'tools',
      'fail',
      `served but not in the manifest (the host drops them, D4 clamp): ${extra.join(', ')}${unserved.length ? `; declared but not served: ${unserved.join(', ')}` : ''}`,
    );
  } else if (servedList === undefined && manifestTools.size > 0) {
    report.add('tools', 'warn', `capability_params.tools is missing: list the tools this run serves (the manifest declares ${[...manifestTools].join(', ')})`);
  } else if (unserved.length || dupes.length) {
    const parts = [];
    if (unserved.length) parts.push(`declared in the manifest but not served: ${unserved.join(', ')}`);
    if (dupes.length) parts.push(`served twice: ${[...new Set(dupes)].join(', ')}`);
    report.add('tools', 'warn', parts.join('; '));
  } else report.add('tools', 'pass', served.length ? `serves ${served.join(', ')}` : 'no tools (none declared)');
}

function checkPrompt(report: Report, manifest: Manifest, init: InitializeResult): void {
  const y = manifest.yolop;
  const offered = (init.capability_params?.prompt?.static ?? '') !== '';
  if (offered && !y.prompt) report.add('prompt', 'warn', 'the server offers a static prompt but the manifest does not declare "prompt": the host ignores it');
  else if (y.prompt && !offered && !y.dynamic_prompt)
    report.add('prompt', 'warn', 'the manifest declares "prompt" but the server sent no static prompt and "dynamic_prompt" is not declared');
  else if (offered) report.add('prompt', 'pass', `static prompt, ${init.capability_params!.prompt!.static.length} characters`);
  else report.add('prompt', 'pass', y.dynamic_prompt ? 'dynamic prompt only' : 'no prompt (none declared)');
}
