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
