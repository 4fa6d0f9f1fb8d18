/**
 * The generated plugin.json: a `$schema` pointer for editors, exactly the requested
 * facets, every host default written out (hook timeout and on_error, empty args) so
 * the author sees the knobs, and TODO markers where only the author knows the words.
 */
import { PLUGIN_SCHEMA_URL } from '../core/package/manifest-rules.js';
import type { ScaffoldSpec } from './request.js';

/**
 * The YEP version the templates speak. A literal rather than an import of
 * yep/protocol.ts, which would load zod for `new` (a test pins the two equal).
 */
export const TEMPLATE_PROTOCOL_VERSION = '1.0';

/** The manifest object, keys in reading order. */
export function renderManifest(spec: ScaffoldSpec): Record<string, unknown> {
  const yolop: Record<string, unknown> = {
    protocol_version: TEMPLATE_PROTOCOL_VERSION,
    // Bare name: the host puts <package>/bin first on PATH, so no path leaks into the manifest.
    capabilityServer: { command: spec.name, args: [] },
  };
  if (spec.config.length > 0) {
    yolop.config_schema = {
      type: 'object',
      properties: Object.fromEntries(
        spec.config.map((f) => [
          f.key,
          {
            type: 'string',
            description: `TODO: what ${f.key} is for.`,
            ...(f.secret ? { secret: true } : {}),
            ...(f.env !== undefined ? { env: f.env } : {}),
          },
        ]),
      ),
      // Fields listed here must be set before the extension works (enable asks for them).
      required: [],
    };
  }
  if (spec.tools.length > 0) {
    yolop.tools = spec.tools.map((name) => ({
      name,
      description: `TODO: say what ${name} does and when to use it (the model reads this).`,
      schema: {
        type: 'object',
        properties: { input: { type: 'string', description: `TODO: describe ${name}'s arguments.` } },
        required: [],
      },
    }));
  }
  if (spec.prompt !== undefined) yolop.prompt = true;
  if (spec.dynamicPrompt) yolop.dynamic_prompt = true;
  if (spec.hooks.length > 0) {
    yolop.hooks = spec.hooks.map((h) => ({ event: h.event, tool_name_glob: h.glob, timeout_ms: 5000, on_error: 'warn' }));
  }
  if (spec.commands.length > 0) {
    yolop.commands = spec.commands.map((name) => ({ name, description: `TODO: say what /${spec.name}:${name} does.`, args: [] }));
  }
  if (spec.status) yolop.status = true;
  if (spec.skills) yolop.skills = true;
  return {
    // Editors validate and complete the manifest from it; the host ignores the key (host-compat §2).
    $schema: PLUGIN_SCHEMA_URL,
    name: spec.name,
    version: '0.1.0',
    description: `TODO: one line saying what ${spec.name} does.`,
    yolop,
  };
}

/** plugin.json text (2-space JSON, trailing newline). */
export function renderManifestText(spec: ScaffoldSpec): string {
  return `${JSON.stringify(renderManifest(spec), null, 2)}\n`;
}
