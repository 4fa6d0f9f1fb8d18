/**
 * YEP v1 wire types: the single source of truth for the payload shapes, the
 * method vocabulary and the capability tokens. schema/yep/v1/{meta,schema}.json
 * are generated from this module (`npm run schema`), so the names of the zod
 * schemas below are the `$defs` names of the host's committed artifacts
 * (host-compat §8).
 *
 * Leniency is the protocol's rule: every object is loose (unknown fields are
 * kept and ignored) and every field the host defaults has the same default
 * here. Strictness lives elsewhere: `validate.ts` reports what does not conform,
 * `decodeLenient` turns a non-conforming payload into a usable one.
 */
import { z } from 'zod';

/** The schema registry that carries `$defs` ids and descriptions into the generated JSON Schema. */
export const yepRegistry = z.registry<{ id?: string; description?: string }>();

/** Name a schema as a `$defs` entry. */
function def<T extends z.ZodType>(id: string, schema: T, description?: string): T {
  yepRegistry.add(schema as z.ZodType, description === undefined ? { id } : { id, description });
  return schema;
}

/** Attach a description to a field schema (kept in the generated JSON Schema). */
function doc<T extends z.ZodType>(schema: T, description: string): T {
  yepRegistry.add(schema as z.ZodType, { description });
  return schema;
}

export const PROTOCOL_VERSION = '1.0';
export const MIN_PROTOCOL_VERSION = '1.0';

/**
 * Contribution tokens a server may advertise in `initialize.result.capabilities`
 * (exactly the host's meta.json vocabulary; the vocabulary is open, unknown tokens
 * are carried and ignored).
 */
export const CAPABILITY_TOKENS = ['tools', 'streaming', 'prompt', 'dynamic_prompt', 'hooks', 'mcp_servers', 'status', 'commands', 'ui_ask', 'trace'] as const;
export type CapabilityToken = (typeof CAPABILITY_TOKENS)[number];

/**
 * Host feature tokens sent in `initialize.params.capabilities` (host-compat §8:
 * "host tokens, e.g. `cancel`, `streaming`"). A separate vocabulary from the
 * server's contribution tokens, published as `host_capabilities` in meta.json.
 */
export const HOST_FEATURE_TOKENS = ['streaming', 'cancel'] as const;

/** JSON-RPC codes the protocol uses. 0 means unclassified. */
export const ERROR_CODE = {
  UNCLASSIFIED: 0,
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
} as const;

/** The message a cancelled call resolves with (spec: "resolves with error `cancelled`"). */
export const CANCELLED_MESSAGE = 'cancelled';

const int = () => z.int();
const str = () => z.string().default('');
const bool = (v: boolean) => z.boolean().default(v);
const anyValue = () => z.unknown().optional();
const nullableString = () => z.string().nullable().optional();

export const ErrorObject = def(
  'ErrorObject',
  z.looseObject({
    code: int().default(0),
    message: z.string(),
    retryable: bool(false),
    data: anyValue(),
  }),
  'JSON-RPC-shaped error object. Everything beyond `message` is optional and defaulted, so a peer that sends bare `{ "message": … }` still parses.',
);
export type ErrorObject = z.output<typeof ErrorObject>;

export const InitializeParams = def(
  'InitializeParams',
  z.looseObject({
    protocol_version: str(),
    session_id: str(),
    workspace_root: str(),
    config: z.unknown().default(null),
    capabilities: doc(z.array(z.string()).default([]), 'Host feature tokens the server may rely on (`streaming`, `cancel`, …).'),
  }),
  'Host → server `initialize` params.',
);
export type InitializeParams = z.output<typeof InitializeParams>;

export const ServedTool = def('ServedTool', z.looseObject({ name: z.string() }));
export type ServedTool = z.output<typeof ServedTool>;

export const PromptParams = def(
  'PromptParams',
  z.looseObject({
    static: doc(str(), 'Static system-prompt contribution.'),
  }),
);
export type PromptParams = z.output<typeof PromptParams>;

export const CapabilityParams = def(
  'CapabilityParams',
  z.looseObject({
    prompt: PromptParams.nullable().optional(),
    tools: doc(
      z.array(ServedTool).optional(),
      'Tool names the server actually serves this run. The definitions (description/schema/policy) live in the package manifest; the handshake may only narrow that set (the manifest is the ceiling).',
    ),
  }),
);
export type CapabilityParams = z.output<typeof CapabilityParams>;

export const InitializeResult = def(
  'InitializeResult',
  z.looseObject({
    protocol_version: str(),
    name: str(),
    capabilities: z.array(z.string()).default([]),
    capability_params: CapabilityParams.optional(),
  }),
  'Server → host `initialize` result. Lenient: unknown fields ignored, missing fields defaulted.',
);
export type InitializeResult = z.output<typeof InitializeResult>;

export const ToolCallParams = def(
  'ToolCallParams',
  z.looseObject({
    tool_call_id: str(),
    name: str(),
    args: z.unknown().default(null),
  }),
  'Host → server `tool/call` params. The result is the tool output, carried verbatim.',
);
export type ToolCallParams = z.output<typeof ToolCallParams>;

export const ToolUpdateParams = def(
  'ToolUpdateParams',
  z.looseObject({
    request_id: int().nonnegative().default(0),
    output: str(),
  }),
  'Payload of a `tool/update` notification, correlated to its in-flight `tool/call` by `request_id` (a notification cannot carry the envelope `id`: that field would classify the line as a response).',
);
export type ToolUpdateParams = z.output<typeof ToolUpdateParams>;

export const CancelParams = def(
  'CancelParams',
  z.looseObject({
    id: doc(int(), 'Envelope id of the in-flight request (same direction) to abort.'),
  }),
  'Host → server `cancel` params: best-effort abort of any in-flight request.',
);
export type CancelParams = z.output<typeof CancelParams>;

export const CancelResult = def(
  'CancelResult',
  z.looseObject({
    cancelled: doc(bool(false), '`false` (nothing to cancel, already done) is benign.'),
  }),
  'Server → host `cancel` result. The cancelled call itself resolves with error message `cancelled`.',
);
export type CancelResult = z.output<typeof CancelResult>;

export const HookFireParams = def(
  'HookFireParams',
  z.looseObject({
    event: doc(str(), '`pre_tool_use` or `post_tool_use`.'),
    tool_name: str(),
    args: z.unknown().default(null),
  }),
  "Host → server `hook/fire` params: a subscribed lifecycle event fired for one tool call (any tool, not just the extension's own).",
);
export type HookFireParams = z.output<typeof HookFireParams>;

export const HookDecision = def(
  'HookDecision',
  z.looseObject({
    block: doc(bool(false), '`true` blocks the tool call (pre_tool_use only).'),
    reason: doc(str(), 'Message shown to the model/audit log when blocking.'),
    user_message: doc(z.string().nullable().default(null), 'Optional user-facing message when blocking.'),
  }),
  'Server → host `hook/fire` result. A bare `{}` means "allow, unchanged".',
);
export type HookDecision = z.output<typeof HookDecision>;

export const PromptContribution = def(
  'PromptContribution',
  z.looseObject({ text: str() }),
  'Server → host `prompt/contribution` result: a dynamic system-prompt contribution recomputed per turn (only when the manifest declares `dynamic_prompt`).',
);
export type PromptContribution = z.output<typeof PromptContribution>;

export const CommandExecuteParams = def(
  'CommandExecuteParams',
  z.looseObject({ arguments: str(), name: str() }),
  "Host → server `command/execute` params: run a manifest-declared slash command. `name` is the command's own name (no `<ext>:` prefix); `arguments` is the raw text after the command token.",
);
export type CommandExecuteParams = z.output<typeof CommandExecuteParams>;

export const CommandExecuteResult = def(
  'CommandExecuteResult',
  z.looseObject({ message: str(), success: bool(true) }),
  'Server → host `command/execute` result: a message the host shows to the user. A bare `{}` means "succeeded, no message".',
);
export type CommandExecuteResult = z.output<typeof CommandExecuteResult>;

export const UiAskParams = def(
  'UiAskParams',
  z.looseObject({
    prompt: doc(str(), 'The question shown to the user.'),
    placeholder: doc(nullableString(), 'Optional placeholder / hint for the input field.'),
    secret: doc(bool(false), 'Mask the input (a credential); the host never echoes the value.'),
    options: doc(z.array(z.string()).nullable().optional(), 'Choices for a selector instead of free text.'),
  }),
  'Server → host `ui/ask` params: ask the user a question and wait for a typed answer. Hosts without a prompt surface answer `cancelled`.',
);
export type UiAskParams = z.output<typeof UiAskParams>;

export const UiAskResult = def(
  'UiAskResult',
  z.looseObject({ answer: str(), cancelled: bool(false) }),
  "Host → server `ui/ask` result: the user's answer (empty + `cancelled` when they dismiss the prompt).",
);
export type UiAskResult = z.output<typeof UiAskResult>;

export const StatusLevel = def(
  'StatusLevel',
  z.enum(['ok', 'warn', 'error']),
  'Severity of a `status/changed` update. Purely presentational; an unknown level is read as `ok`.',
);
export type StatusLevel = z.output<typeof StatusLevel>;

export const StatusChangedParams = def(
  'StatusChangedParams',
  z.looseObject({
    detail: doc(nullableString(), 'Optional long form for `/extensions list`.'),
    level: StatusLevel.default('ok'),
    status: doc(str(), "Short text for the status bar. Empty clears the extension's field."),
  }),
  'Server → host `status/changed` params: a short capability status the host surfaces in its status bar.',
);
export type StatusChangedParams = z.output<typeof StatusChangedParams>;

export const LogLevel = def(
  'LogLevel',
  z.enum(['error', 'warn', 'info', 'debug', 'trace']),
  "Severity of a `log` notification (the host's tracing levels); an unknown level is read as `info`.",
);
export type LogLevel = z.output<typeof LogLevel>;

export const LogParams = def(
  'LogParams',
  z.looseObject({
    level: LogLevel.default('info'),
    message: str(),
    target: doc(nullableString(), 'Optional logger name / module path.'),
    data: doc(anyValue(), 'Structured fields, carried verbatim.'),
  }),
  "Server → host `log` notification: structured logs for the host's tracing layer (stderr stays free for plain logs).",
);
export type LogParams = z.output<typeof LogParams>;

export const TraceEventParams = def(
  'TraceEventParams',
  z.looseObject({
    context: doc(anyValue(), 'Correlation ids (turn/exec/message/model/…) carried verbatim.'),
    data: doc(anyValue(), 'Event-type-specific payload, carried verbatim.'),
    event_type: doc(str(), 'Event type, e.g. `turn.started`, `tool.completed`, `llm.generation`.'),
    id: doc(str(), "Stable event id from the host's session event log."),
    session_id: doc(str(), 'Session the event belongs to.'),
    ts: doc(str(), 'RFC 3339 timestamp of the event.'),
  }),
  'Host → server `trace/event` notification: one agentic-lifecycle event, forwarded observe-only to an extension that declares `trace`. Never answered.',
);
export type TraceEventParams = z.output<typeof TraceEventParams>;

export const ConfigChangedParams = def(
  'ConfigChangedParams',
  z.looseObject({
    config: doc(z.unknown().default(null), 'The new validated, non-secret config (secrets reach the server only as env).'),
  }),
  'Host → server `config/changed` notification.',
);
export type ConfigChangedParams = z.output<typeof ConfigChangedParams>;

export const WorkspaceChangedParams = def(
  'WorkspaceChangedParams',
  z.looseObject({
    workspace_root: doc(str(), 'The new workspace root (absolute path).'),
  }),
  'Host → server `workspace/changed` notification: the active worktree/root was repointed.',
);
export type WorkspaceChangedParams = z.output<typeof WorkspaceChangedParams>;

/** `host` = host → server; `server` = server → host (the host's meta.json spelling). */
export type Direction = 'host' | 'server';
export type MethodKind = 'request' | 'notification';

export interface MethodSpec {
  name: string;
  direction: Direction;
  kind: MethodKind;
  description: string;
  params?: z.ZodType;
  result?: z.ZodType;
}

/**
 * Every YEP v1 method. The first twelve are the host's committed meta.json;
 * `cancel`, `log` and `workspace/changed` are in the host's method table
 * (extensions-spec "Methods") but not yet in its artifact; docs/protocol.md says why
 * they are published here.
 */
export const METHODS: readonly MethodSpec[] = [
  {
    name: 'initialize',
    direction: 'host',
    kind: 'request',
    description: 'Handshake: negotiate version, pass config; server replies with contributions.',
    params: InitializeParams,
    result: InitializeResult,
  },
  { name: 'initialized', direction: 'host', kind: 'notification', description: 'Notification: handshake complete.' },
  { name: 'tool/call', direction: 'host', kind: 'request', description: 'Invoke a tool the server declared.', params: ToolCallParams },
  {
    name: 'tool/update',
    direction: 'server',
    kind: 'notification',
    description: 'Notification: streamed progress for an in-flight tool/call (correlated by request_id).',
    params: ToolUpdateParams,
  },
  {
    name: 'cancel',
    direction: 'host',
    kind: 'request',
    description: 'Best-effort abort of an in-flight request by id; the aborted call resolves with error `cancelled`. Servers without support answer -32601.',
    params: CancelParams,
    result: CancelResult,
  },
  {
    name: 'status/changed',
    direction: 'server',
    kind: 'notification',
    description: 'Notification: a short capability status the host surfaces in its status bar (empty status clears it).',
    params: StatusChangedParams,
  },
  {
    name: 'log',
    direction: 'server',
    kind: 'notification',
    description: "Notification: a structured log record for the host's tracing layer.",
    params: LogParams,
  },
  {
    name: 'hook/fire',
    direction: 'host',
    kind: 'request',
    description: 'Fire a subscribed lifecycle hook (pre_tool_use/post_tool_use).',
    params: HookFireParams,
    result: HookDecision,
  },
  {
    name: 'prompt/contribution',
    direction: 'host',
    kind: 'request',
    description: 'Request a fresh dynamic system-prompt contribution.',
    result: PromptContribution,
  },
  {
    name: 'command/execute',
    direction: 'host',
    kind: 'request',
    description: 'Run a manifest-declared slash command; the result message is shown to the user.',
    params: CommandExecuteParams,
    result: CommandExecuteResult,
  },
  {
    name: 'ui/ask',
    direction: 'server',
    kind: 'request',
    description: 'Ask the user a question and wait for a typed answer (TUI hosts only).',
    params: UiAskParams,
    result: UiAskResult,
  },
  { name: 'config/changed', direction: 'host', kind: 'notification', description: 'Notify the server its config changed.', params: ConfigChangedParams },
  {
    name: 'workspace/changed',
    direction: 'host',
    kind: 'notification',
    description: 'Notification: the active worktree/workspace root was repointed.',
    params: WorkspaceChangedParams,
  },
  {
    name: 'trace/event',
    direction: 'host',
    kind: 'notification',
    description:
      'Notification: forward one agentic-lifecycle event (turn/reason/act/tool/llm) to an extension that declares `trace`, for export to a tracing backend.',
    params: TraceEventParams,
  },
  {
    name: 'shutdown',
    direction: 'host',
    kind: 'request',
    description: 'Request a graceful stop; the server answers `{}` and exits (EOF on stdin also means exit).',
  },
];

const BY_NAME = new Map(METHODS.map((m) => [m.name, m]));

/** The method's spec, or undefined for a method outside the v1 vocabulary. */
export function findMethod(name: string): MethodSpec | undefined {
  return BY_NAME.get(name);
}

/** Types published under `$defs` that no method references directly. */
export const EXTRA_DEFS: readonly z.ZodType[] = [ErrorObject, CapabilityParams];
