/**
 * What every template derives from a spec in the same way: the capability
 * tokens of the handshake and small text helpers for assembling sources.
 */
import type { ScaffoldSpec } from './request.js';

/**
 * Tokens for `initialize.result.capabilities`: one per declared facet, so doctor's
 * `capabilities` check (a token the manifest does not declare is a warning) stays
 * green. `streaming` goes with tools because every template offers `progress`.
 * `skills` and config are manifest-only: the server takes no part in them.
 */
export function capabilityTokens(spec: ScaffoldSpec): string[] {
  const tokens: string[] = [];
  if (spec.tools.length > 0) tokens.push('tools', 'streaming');
  if (spec.prompt !== undefined) tokens.push('prompt');
  if (spec.dynamicPrompt) tokens.push('dynamic_prompt');
  if (spec.hooks.length > 0) tokens.push('hooks');
  if (spec.commands.length > 0) tokens.push('commands');
  if (spec.status) tokens.push('status');
  return tokens;
}

/** A server-side facet whose handler the author fills in. */
export type HandlerFacet = 'tool' | 'hook' | 'prompt' | 'command';

/**
 * The handlers a spec's server has, in the order every template renders them: the one
 * reading of "which facets need a handler" for the generated source and `new`'s report.
 */
export function declaredHandlers(spec: ScaffoldSpec): HandlerFacet[] {
  const out: HandlerFacet[] = [];
  if (spec.tools.length > 0) out.push('tool');
  if (spec.hooks.length > 0) out.push('hook');
  if (spec.dynamicPrompt) out.push('prompt');
  if (spec.commands.length > 0) out.push('command');
  return out;
}

/** Join template parts, dropping the ones a facet switched off (`false`/`undefined`; `''` stays: a blank line). */
export function joinParts(parts: readonly (string | false | undefined)[], separator = '\n'): string {
  return parts.filter((p): p is string => typeof p === 'string').join(separator);
}

/** One line per config field saying where its value arrives (used in every template's comments). */
export function configLines(spec: ScaffoldSpec, read: (key: string) => string, readEnv: (env: string) => string): string[] {
  return spec.config.map((f) => {
    if (f.secret) return `${f.key} (secret): ${readEnv(f.env!)}`;
    return `${f.key}: ${read(f.key)}${f.env !== undefined ? ` (also in $${f.env})` : ''}`;
  });
}

/** What a language gives the one layout of a generated server source. */
export interface ServerTemplate {
  /** The full-width comment line that frames each section's title. */
  rule: string;
  /** The line-comment marker: `//` or `#`. */
  comment: string;
  /** Between parts and between handlers (Python's style wants two blank lines). */
  separator: string;
  /** The handlers: each rendered only for a facet the spec declares. */
  handlers: {
    tools: (spec: ScaffoldSpec) => string;
    hook: string;
    prompt: string;
    commands: (spec: ScaffoldSpec) => string;
  };
  /** The file's opening, the helpers for the handlers, and the protocol that should need no change. */
  parts: Record<'header' | 'helpers' | 'protocol', (spec: ScaffoldSpec) => string>;
}

/**
 * A server source in the layout every template shares: the header, then the handlers the
 * author edits, the helpers for them, and the protocol that should need no change, each
 * section under a framed title.
 */
export function renderServerSource(spec: ScaffoldSpec, t: ServerTemplate): string {
  const render: Record<HandlerFacet, () => string> = {
    tool: () => t.handlers.tools(spec),
    hook: () => t.handlers.hook,
    prompt: () => t.handlers.prompt,
    command: () => t.handlers.commands(spec),
  };
  const handlers = declaredHandlers(spec)
    .map((f) => render[f]())
    .join(t.separator);
  const section = (title: string): string => `${t.rule}\n${t.comment} ${title}\n${t.rule}`;
  return `${joinParts(
    [
      t.parts.header(spec),
      section('YOUR CODE: the handlers below are the parts to edit.'),
      handlers || `${t.comment} This extension declares no server-side facet (tools, hooks, prompt, commands): nothing to handle.`,
      section('Helpers for your code.'),
      t.parts.helpers(spec),
      section('The protocol (YEP v1). Nothing below should need changes.'),
      t.parts.protocol(spec),
    ],
    t.separator,
  )}\n`;
}
