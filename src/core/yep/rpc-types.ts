/**
 * The vocabulary of the RPC session (rpc-session.ts): how a request fails, what
 * is recorded per message, the options of a request and of a session, and what
 * the session needs of the process under it (its transport).
 */
import type { Clock } from '../clock.js';
import type { ErrorObject, ToolUpdateParams, UiAskParams, UiAskResult } from './protocol.js';

export type RequestFailure = 'remote' | 'timeout' | 'exited' | 'cancelled' | 'aborted' | 'overflow' | 'not-running';

/** Why a request did not produce a result. `remote` carries the server's error object. */
export class YepRequestError extends Error {
  constructor(
    readonly kind: RequestFailure,
    readonly method: string,
    readonly id: number,
    message: string,
    readonly remote?: ErrorObject,
  ) {
    super(message);
    this.name = 'YepRequestError';
  }
}

export interface MessageRecord {
  seq: number;
  /** Milliseconds since start. */
  at: number;
  direction: 'in' | 'out';
  kind: 'request' | 'notification' | 'response' | 'malformed';
  /** For responses: the method of the request it answers (when known). */
  method?: string;
  id?: number;
  /** The parsed (in) or sent (out) message; absent for malformed lines and for lines over RECORD_MESSAGE_MAX bytes. */
  message?: unknown;
  /** Size of the received line in bytes. */
  bytes?: number;
  /** Protocol/schema violations found in this message. */
  problems: string[];
  /** Things worth knowing that break no rule (a late answer, an unknown method). */
  notes: string[];
}

export interface AskContext {
  signal: AbortSignal;
}

export interface RequestOptions {
  /** Overrides the client default; 0 = no timeout. */
  timeoutMs?: number;
  /** Aborting sends `cancel` and fails the request locally at once. */
  signal?: AbortSignal;
  /** `tool/update` notifications correlated to this request. */
  onUpdate?: (update: ToolUpdateParams) => void;
}

export interface PendingCall<T = unknown> {
  id: number;
  result: Promise<T>;
}

export interface CancelOutcome {
  cancelled: boolean;
  /** False when the server answered -32601 (no cancel support; allowed). */
  supported: boolean;
}

export interface SessionOptions {
  /** Cap on one stdout line in bytes. Passing it is fatal (the transport is killed). */
  maxLineBytes: number;
  /** Default per-request timeout in ms (0 = none). */
  requestTimeoutMs: number;
  /** Records kept (the oldest go first; problems are kept separately). */
  maxRecords: number;
  /** Values never quoted in a problem or note. */
  secrets?: readonly string[];
  onAsk?: (params: UiAskParams, context: AskContext) => Promise<Partial<UiAskResult>> | Partial<UiAskResult>;
  onNotification?: (method: string, params: unknown) => void;
  onMessage?: (record: MessageRecord) => void;
  /** Request timeouts and the cancel grace run on it (ctx.clock; default the system clock). */
  clock?: Clock;
}

/** What the session needs of the process under it. */
export interface SessionTransport {
  readonly running: boolean;
  /** True once the peer has exited (or failed to start). */
  readonly hasExited: boolean;
  /** Resolves when the peer is gone. */
  readonly exited: Promise<unknown>;
  /** Write one encoded line; false when it could not be delivered. */
  write(line: string): boolean;
  /** A phrase after "the server": "exited with code 3". */
  describeExit(): string;
  elapsed(): number;
  /** End the peer at once (a fatal protocol violation). */
  kill(): void;
}
