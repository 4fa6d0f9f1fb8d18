/**
 * What `doctor` last saw each contributed MCP server of an installed extension
 * offer the model: its tools' names, descriptions and input schemas, and the static
 * prompt text the capability server sent in its handshake, kept in
 * `<store>/.yep-mcp/<name>.json` (a dot-directory: the host ignores it;
 * docs/formats.md). The manifest's grant cannot cover these words (they come
 * from the running server, not from plugin.json), so this record is how a
 * change between two doctor runs (a tool added, removed, or reworded: a "rug
 * pull" that steers the model without an update) is noticed. A record that is
 * missing, unreadable or of another format is treated as none (the next run is
 * a first look); one that is not a regular file is refused.
 */
import { join } from 'node:path';
import { storeCustody, type Paths } from '../paths.js';
import { makeOwnedDir, removeOwned } from '../fs/custody.js';
import { writeFileAtomic } from '../fs/fs-atomic.js';
import { readRegularTextSync } from '../fs/read-regular-file.js';
import { assertValidName } from '../package/names.js';
import { assertLockKept } from '../fs/lock-hold.js';

interface McpRecordedTool {
  name: string;
  description: string;
  input_schema: unknown;
}

export interface McpServerRecord {
  /** When doctor listed these tools (ISO 8601). */
  seen_at: string;
  /** The manifest's version then (null: none). */
  version: string | null;
  /** Digest of the server's declaration in plugin.json then (transport, command/args/env or url/headers as written). */
  declaration: string;
  /** Sorted by name. */
  tools: McpRecordedTool[];
}

/** The static prompt the capability server sent in its handshake (plugin.json says only `"prompt": true`). */
interface PromptRecord {
  seen_at: string;
  version: string | null;
  /** The text, secrets redacted. */
  text: string;
}

export interface McpRecord {
  format: 1;
  name: string;
  /** By the key in plugin.json's `mcpServers`. */
  servers: Record<string, McpServerRecord>;
  /** What doctor last saw the capability server put in the system prompt (absent: never recorded). */
  prompt?: PromptRecord;
}

/** `<store>/.yep-mcp/<name>.json`. */
export function mcpRecordFile(paths: Paths, name: string): string {
  return join(paths.mcpDir, `${assertValidName(name)}.json`);
}

/** The record of `name`, or undefined when there is none usable. */
export function loadMcpRecord(paths: Paths, name: string): McpRecord | undefined {
  const text = readRegularTextSync(mcpRecordFile(paths, name), 'The MCP tool record');
  if (text === undefined) return undefined;
  try {
    const r = JSON.parse(text) as McpRecord;
    if (r?.format !== 1 || r.name !== name || typeof r.servers !== 'object' || r.servers === null || Array.isArray(r.servers)) return undefined;
    return r;
  } catch {
    return undefined;
  }
}

/** Write the record (atomic, mode 0600: descriptions may quote what a server was given). */
export async function saveMcpRecord(paths: Paths, record: McpRecord): Promise<void> {
  assertLockKept(paths);
  await makeOwnedDir(storeCustody(paths, 'mcp'), 0o700);
  await writeFileAtomic(mcpRecordFile(paths, record.name), `${JSON.stringify(record, null, 2)}\n`, { what: 'The MCP tool record', mode: 0o600 });
}

/** Forget it (a removal). */
export async function removeMcpRecord(paths: Paths, name: string): Promise<void> {
  await removeOwned(storeCustody(paths, 'mcp'), `${assertValidName(name)}.json`);
}
