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
    report.add(
      'protocol_version',
      'warn',
      `the server did not say which protocol version it speaks (yolop speaks ${PROTOCOL_VERSION}): answer initialize with "protocol_version": "${PROTOCOL_VERSION}"`,
    );
    return true;
  }
  const c = checkCompatibility(init.protocol_version);
  if (!c.compatible) {
    report.add(
      'protocol_version',
      'fail',
      `the server speaks protocol ${JSON.stringify(init.protocol_version)} (${c.reason}); yolop speaks ${PROTOCOL_VERSION} and will not load it: answer "protocol_version": "${PROTOCOL_VERSION}"`,
    );
    return false;
  }
  report.add('protocol_version', 'pass', `${init.protocol_version} (yolop speaks ${PROTOCOL_VERSION})${c.note ? `; ${c.note}` : ''}`);
  return true;
}

function checkName(report: Report, manifest: Manifest, init: InitializeResult): void {
  if (init.name === '')
    report.add('name', 'warn', `the server did not say its name: answer initialize with "name": ${JSON.stringify(manifest.name)}, as in plugin.json`);
  else if (init.name !== manifest.name)
    report.add(
      'name',
      'warn',
      `the server calls itself ${JSON.stringify(init.name)} but plugin.json names it ${JSON.stringify(manifest.name)}: use the same name in both`,
    );
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
  const detail = [`the server offers: ${init.capabilities.length ? init.capabilities.join(', ') : '(nothing)'}`];
  if (undeclared.length)
    detail.push(
      `plugin.json does not declare ${undeclared.join(', ')}, so yolop ignores ${undeclared.length === 1 ? 'it' : 'them'}: declare ${undeclared.length === 1 ? 'it' : 'them'} in plugin.json's yolop block, or stop offering ${undeclared.length === 1 ? 'it' : 'them'}`,
    );
  if (unknown.length) detail.push(`names yolop does not know (ignored): ${unknown.join(', ')}`);
  report.add('capabilities', undeclared.length ? 'warn' : 'pass', detail.join('; '));
}

function checkTools(report: Report, manifest: Manifest, init: InitializeResult): void {
  const servedList = init.capability_params?.tools;
  const served = (servedList ?? []).map((t) => t.name);
  const manifestTools = new Set(manifest.yolop.tools.map((t) => t.name));
  const extra = served.filter((t) => !manifestTools.has(t));
  const unserved = [...manifestTools].filter((t) => !served.includes(t));
  const dupes = served.filter((t, i) => served.indexOf(t) !== i);
  const them = (list: readonly string[]): string => (list.length === 1 ? 'it' : 'them');
  if (extra.length) {
    // yolop shows the model only the tools plugin.json lists: the manifest is what the user approved.
    report.add(
      'tools',
      'fail',
      `the server offers ${extra.join(', ')}, which plugin.json does not list: yolop hides every tool plugin.json does not list, so the model never sees ${them(extra)}. Add ${them(extra)} to "tools" in plugin.json, or stop offering ${them(extra)}${unserved.length ? `; plugin.json also lists ${unserved.join(', ')}, which the server does not offer` : ''}`,
    );
  } else if (servedList === undefined && manifestTools.size > 0) {
    report.add(
      'tools',
      'warn',
      `the server's initialize answer does not say which tools it offers (capability_params.tools): list them there (plugin.json declares ${[...manifestTools].join(', ')})`,
    );
  } else if (unserved.length || dupes.length) {
    const parts = [];
    if (unserved.length)
      parts.push(
        `plugin.json lists ${unserved.join(', ')}, which the server does not offer: offer ${them(unserved)} or remove ${them(unserved)} from plugin.json`,
      );
    if (dupes.length) parts.push(`the server lists ${[...new Set(dupes)].join(', ')} twice`);
    report.add('tools', 'warn', parts.join('; '));
  } else report.add('tools', 'pass', served.length ? `offers ${served.join(', ')}, as plugin.json lists` : 'no tools (plugin.json lists none)');
}

function checkPrompt(report: Report, manifest: Manifest, init: InitializeResult): void {
  const y = manifest.yolop;
  const offered = (init.capability_params?.prompt?.static ?? '') !== '';
  if (offered && !y.prompt)
    report.add(
      'prompt',
      'warn',
      'the server sends prompt text, but plugin.json does not declare "prompt": true, so yolop ignores it: declare it, or stop sending it',
    );
  else if (y.prompt && !offered && !y.dynamic_prompt)
    report.add(
      'prompt',
      'warn',
      'plugin.json declares "prompt" but the server sent no prompt text (and "dynamic_prompt" is not declared): send it in capability_params.prompt.static, or remove "prompt"',
    );
  else if (offered) report.add('prompt', 'pass', `prompt text of ${init.capability_params!.prompt!.static.length} characters`);
  else report.add('prompt', 'pass', y.dynamic_prompt ? 'a new prompt each turn (dynamic_prompt) only' : 'no prompt (plugin.json declares none)');
}
