/**
 * The contribution summary (install) and the contribution diff (update) as lines of text.
 * Pure: data in, strings out. Every string that came from a package passes sanitize(), so a
 * manifest cannot repaint or hide what the user approves (hardening D29). The sharpest
 * edges (hooks, prompt, server command, the words the model reads) are named in words, not
 * only in colour; a changed text is shown as a diff of its lines.
 */
import {
  envReferences,
  grantFingerprint,
  grantOf,
  grantWarnings,
  normalizeGrant,
  type Grant,
  type GrantChange,
  type GrantChangeValue,
  type GrantCommand,
  type GrantConfigField,
  type GrantDiff,
  type GrantHook,
  type GrantMcpServer,
  type GrantTool,
} from '../core/package/grants.js';
import { textDiff } from './text-diff.js';
import type { Manifest } from '../core/package/manifest.js';
import { sanitize } from '../core/text/sanitize.js';
import { bold, dim, red, yellow, type StyleTarget } from './style.js';

/** Where the lines will be written: colour is decided per stream (TTY, NO_COLOR). */
export interface RenderGrantOptions {
  stream?: StyleTarget;
  /**
   * The summary's closing `grant <fingerprint>` line (default on). Off where the fingerprint
   * is printed elsewhere in the same output (a refusal's `--accept` hint, `info`'s grant line):
   * it is printed once.
   */
  fingerprint?: boolean;
}

const LABEL_WIDTH = 13;

/** Sanitised text, capped so one hostile string cannot flood the summary. */
const clean = (text: string): string => sanitize(text, { max: 300 });

/** Sanitised and double-quoted, with inner quotes escaped so the quoting cannot be faked. */
const quoted = (text: string): string => `"${clean(text).replace(/"/g, '\\"')}"`;

/** One argv word as a shell user would read it (the host never uses a shell; this is display only). */
function word(text: string): string {
  const s = clean(text);
  return /^[A-Za-z0-9_@%+=:,./${}-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

const argv = (command: string, args: readonly string[]): string => [command, ...args].map(word).join(' ');

const forwards = (refs: readonly string[]): string => (refs.length > 0 ? ` (forwards your ${refs.map((r) => `$${clean(r)}`).join(', ')})` : '');

function stylers(s: StyleTarget | undefined) {
  return { bold: (t: string) => bold(t, s), dim: (t: string) => dim(t, s), red: (t: string) => red(t, s), yellow: (t: string) => yellow(t, s) };
}

function hookText(h: GrantHook, loud: (t: string) => string): string {
  const target = h.match_all ? loud(`EVERY tool (${quoted(h.glob)}): sees the arguments of every tool call`) : `tools matching ${quoted(h.glob)}`;
  const onError = h.on_error === 'block' ? 'on_error block (a failing hook blocks the call)' : 'on_error warn';
  return `${h.event} on ${target}, ${onError}, timeout ${h.timeout_ms} ms`;
}

function mcpText(s: GrantMcpServer): string {
  if (s.transport === 'stdio') {
    const refs = [...new Set([s.command, ...s.args].flatMap(envReferences).concat(s.env.flatMap((v) => v.refs)))].sort();
    const env = s.env.length > 0 ? `; env ${s.env.map((v) => clean(v.name)).join(', ')}` : '';
    return `${clean(s.name)} (stdio, local): runs ${argv(s.command, s.args)}${env}${forwards(refs)}`;
  }
  const refs = [...new Set(envReferences(s.url).concat(s.headers.flatMap((v) => v.refs)))].sort();
  const headers = s.headers.length > 0 ? `; headers ${s.headers.map((v) => clean(v.name)).join(', ')}` : '';
  return `${clean(s.name)} (http, remote): connects to ${clean(s.url)}${headers}${forwards(refs)}`;
}

function commandText(extension: string, c: GrantCommand): string {
  const args = c.args.map((a) => (a.required ? `<${clean(a.name)}>` : `[${clean(a.name)}]`));
  return `${[`${clean(extension)}:${clean(c.name)}`, ...args].join(' ')}${brief(c.description)}`;
}

function configText(f: GrantConfigField): string {
  const flags = [f.secret ? 'secret' : '', f.env !== undefined ? `env ${clean(f.env)}` : '', f.required ? 'required' : ''].filter(Boolean);
  return `${clean(f.key)}${flags.length > 0 ? ` (${flags.join(', ')})` : ''}`;
}

/** A description on one line, cut short: the summary names what the model reads, the diff shows it whole. */
const brief = (text: string | undefined): string => (text === undefined ? '' : `: ${quoted(sanitize(text, { max: 72 }))}`);

const toolText = (t: GrantTool): string => `${clean(t.name)}${t.never_defer ? ' [never_defer: schema always in context]' : ''}${brief(t.description)}`;

function optInTexts(g: Grant): string[] {
  return [
    g.opt_ins.status ? 'status bar text' : '',
    g.opt_ins.ui_ask ? 'asks you questions (ui_ask)' : '',
    g.opt_ins.trace ? 'trace events' : '',
    g.opt_ins.skills ? 'skills' : '',
  ].filter(Boolean);
}

function section(lines: string[], label: string, items: string[]): void {
  for (const [i, item] of items.entries()) lines.push(`  ${(i === 0 ? label : '').padEnd(LABEL_WIDTH)}${item}`);
}

/**
 * The install contribution summary: everything the extension may contribute, readable
 * from the manifest without running anything. Hooks and prompt are always shown (as
 * "none" when absent); a match-all hook and the prompt are marked with `!`.
 */
export function renderSummary(input: Manifest | Grant, options: RenderGrantOptions = {}): string[] {
  const manifest = 'yolop' in input ? input : undefined;
  const g = 'yolop' in input ? grantOf(input) : normalizeGrant(input);
  const st = stylers(options.stream);
  const loud = (t: string) => st.red(st.bold(t));
  const lines: string[] = [];
  const version = manifest?.version !== undefined ? ` ${clean(manifest.version)}` : '';
  lines.push(st.bold(`${clean(g.name)}${version} contributes:`));
  if (manifest?.description) lines.push(`  ${st.dim(clean(manifest.description))}`);

  section(lines, 'server', [
    `runs ${argv(g.server.command, g.server.args)} (argv, no shell)`,
    ...(g.server.binaries !== undefined ? [`prebuilt binary from ${clean(g.server.binaries)}`] : []),
  ]);
  if (g.tools.length > 0) section(lines, `tools (${g.tools.length})`, g.tools.map(toolText));
  section(lines, 'hooks', g.hooks.length > 0 ? g.hooks.map((h) => `${h.match_all ? '! ' : ''}${hookText(h, loud)}`) : ['none']);
  if (g.mcp_servers.length > 0) section(lines, 'mcp servers', g.mcp_servers.map(mcpText));
  const prompt = [
    g.prompt.static ? `! ${st.yellow('static prompt')} (text supplied by the server at start)` : '',
    g.prompt.dynamic ? `! ${st.yellow('dynamic prompt')} (the server may add text every turn)` : '',
  ].filter(Boolean);
  section(lines, 'prompt', prompt.length > 0 ? prompt : ['none']);
  if (g.commands.length > 0)
    section(
      lines,
      'commands',
      g.commands.map((c) => commandText(g.name, c)),
    );
  const optIns = optInTexts(g);
  if (optIns.length > 0) section(lines, 'opt-ins', [optIns.join(', ')]);
  if (g.config.length > 0) section(lines, 'config', g.config.map(configText));

  for (const w of grantWarnings(g)) {
    if (w.code === 'never_defer_overflow') {
      lines.push(st.yellow(`  warning: ${w.count} tools ask for never_defer; the host honours ${w.limit} and silently defers the rest.`));
    }
  }
  if (options.fingerprint !== false) lines.push(st.dim(`  grant ${grantFingerprint(g)}`));
  return lines;
}

// ---------------------------------------------------------------------------

const SIGN: Record<GrantChange['kind'], string> = { added: '+', removed: '-', changed: '~' };
/** Facets whose widening is an injection edge (spec "Trust"): named first and marked `!`. */
const SHARP_FACETS = new Set<GrantChange['facet']>(['hooks', 'prompt', 'server', 'text']);
/** How the closing line names each sharp facet. */
const EDGE_NAMES: Record<string, string> = { hooks: 'hooks', prompt: 'prompt', server: 'server command', text: 'text the model reads' };

function scalar(v: GrantChangeValue | undefined): string {
  if (v === undefined) return '';
  if (typeof v === 'boolean') return v ? 'on' : 'off';
  if (typeof v === 'string') return quoted(v);
  if (Array.isArray(v)) return v.length > 0 ? v.map(word).join(' ') : '(none)';
  return '';
}

const fromTo = (c: GrantChange, f: (v: GrantChangeValue) => string): string =>
  c.before !== undefined && c.after !== undefined ? `${f(c.before)} -> ${f(c.after)}` : f((c.after ?? c.before) as GrantChangeValue);

function describe(c: GrantChange, extension: string, loud: (t: string) => string): string {
  const isObj = (v: GrantChangeValue | undefined): boolean => typeof v === 'object' && v !== null && !Array.isArray(v);
  switch (c.facet) {
    case 'server':
      return `server ${clean(c.key)}: ${fromTo(c, scalar)}`;
    case 'tools': {
      if (c.kind === 'changed') return `tool ${clean(c.key)}: never_defer ${fromTo(c, scalar)}`;
      const t = (c.after ?? c.before) as GrantTool | undefined;
      return `tool ${t ? toolText(t) : clean(c.key)}`;
    }
    case 'text':
      // `tool <name> description`, `command <name> args`, ...: the lines of the text follow.
      return clean(c.key);
    case 'hooks':
      return `hook ${fromTo(c, (v) => hookText(v as GrantHook, loud))}`;
    case 'mcp_servers': {
      if (isObj(c.after) || isObj(c.before)) {
        // A whole server (added, removed, transport change) or an env/header entry (value hidden).
        const v = (c.after ?? c.before) as { transport?: string; name: string };
        if (v.transport !== undefined) return `MCP server ${fromTo(c, (s) => mcpText(s as GrantMcpServer))}`;
        // Keys are `<server>.env.<NAME>` / `<server>.headers.<Name>`; server names hold no dots.
        const [server = '', field = ''] = c.key.split('.');
        return `MCP server ${clean(server)}: ${field === 'env' ? 'env' : 'header'} ${clean(v.name)}`;
      }
      const [server = '', field = ''] = c.key.split('.');
      return `MCP server ${clean(server)}: ${clean(field)} ${fromTo(c, scalar)}`;
    }
    case 'prompt':
      return `${c.key === 'static' ? 'static prompt' : 'dynamic prompt'}: ${fromTo(c, scalar)}`;
    case 'opt_ins':
      return `opt-in ${clean(c.key)}: ${fromTo(c, scalar)}`;
    case 'commands':
      return `command ${c.after || c.before ? fromTo(c, (v) => commandText(extension, v as GrantCommand)) : `${clean(extension)}:${clean(c.key)}`}`;
    case 'config':
      return `config ${fromTo(c, (v) => configText(v as GrantConfigField))}`;
  }
}

/** The lines of a changed text, under its change line: `-` old, `+` new, trimmed to a screenful. */
function textLines(c: GrantChange, st: ReturnType<typeof stylers>): string[] {
  if (c.facet !== 'text') return [];
  const before = typeof c.before === 'string' ? c.before : c.kind === 'added' ? '' : undefined;
  const after = typeof c.after === 'string' ? c.after : '';
  const paint = { '-': st.red, '+': st.yellow, ' ': (t: string) => t, '…': st.dim };
  return textDiff(before, after).map((l) => `      ${paint[l.sign](`${l.sign === '…' ? '…' : l.sign} ${l.text}`.trimEnd())}`);
}

/**
 * The contribution diff: widening changes first (sharpest edges, marked `!`, on top),
 * then narrowing, then neutral; every line says what changed and why it counts, and a
 * changed text shows its old and new lines. The fingerprint to `--accept` is not here:
 * the refusal's hint (or a dry run's plan) names it, once.
 */
export function renderDiff(diff: GrantDiff, options: RenderGrantOptions = {}): string[] {
  const st = stylers(options.stream);
  const loud = (t: string) => st.red(st.bold(t));
  const name = clean(diff.name);
  if (diff.changes.length === 0) return [`${name}: the grant is unchanged.`];
  const lines: string[] = [st.bold(`Grant changes for ${name}:`)];
  const line = (c: GrantChange, sharp: boolean) => `  ${sharp ? '! ' : ''}${SIGN[c.kind]} ${describe(c, diff.name, loud)} — ${clean(c.reason)}`;
  const push = (c: GrantChange, sharp: boolean, paint: (t: string) => string = (t) => t) => lines.push(paint(line(c, sharp)), ...textLines(c, st));

  const widening = diff.changes.filter((c) => c.effect === 'widening');
  const sharp = widening.filter((c) => SHARP_FACETS.has(c.facet));
  if (widening.length > 0) {
    lines.push(loud('Widens the grant (needs your consent):'));
    for (const c of sharp) push(c, true, st.red);
    for (const c of widening.filter((x) => !SHARP_FACETS.has(x.facet))) push(c, false);
  }
  const narrowing = diff.changes.filter((c) => c.effect === 'narrowing');
  if (narrowing.length > 0) {
    lines.push(st.bold('Narrows the grant:'));
    for (const c of narrowing) push(c, false);
  }
  const neutral = diff.changes.filter((c) => c.effect === 'neutral');
  if (neutral.length > 0) {
    lines.push(st.bold('Other changes:'));
    for (const c of neutral) push(c, false);
  }
  if (diff.widens) {
    const edges = [...new Set(sharp.map((c) => EDGE_NAMES[c.facet] as string))];
    const named = edges.length > 0 ? ` including ${edges.join(', ')}` : '';
    lines.push(st.yellow(`${widening.length} widening change${widening.length === 1 ? '' : 's'}${named}: needs your consent.`));
  } else {
    lines.push(st.dim('Nothing widens: no consent needed.'));
  }
  return lines;
}
