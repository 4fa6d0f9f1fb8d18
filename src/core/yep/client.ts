/**
 * A YEP v1 client: starts a capability server the way the host does and speaks
 * the protocol with it. Usable on its own (no oclif, no printing); doctor is
 * built on it. Two halves joined here:
 *   - server-process.ts, the process supervisor: spawn, pipes, stderr tail, the
 *     stop sequence, and everything the server started (group and descendants);
 *   - rpc-session.ts, the RPC session: framing, ids, multiplexing, timeouts,
 *     the server's own requests, tool/update streams, message records.
 *
 * What it guarantees, whatever the server does (hardening F39-F46):
 * no unhandled 'error' event; bounded memory; every request settles; nothing
 * the server started is left running after stop(), kill(), an abort, or when
 * this process exits; `secrets` never appear in what it reports.
 */
import type { InitializeParams, InitializeResult, UiAskParams, UiAskResult } from './protocol.js';
import { DEFAULT_MAX_LINE_BYTES } from './framing.js';
import type { ServerLaunch } from './server-launch.js';
import type { Spawn } from '../context.js';
import type { Clock } from '../clock.js';
import { ServerProcess, type AdoptableServer, type ExitInfo, type StopReport } from './server-process.js';
import { RpcSession, type AskContext, type CancelOutcome, type MessageRecord, type PendingCall, type RequestOptions } from './rpc-session.js';

export { YepRequestError, RECORD_MESSAGE_MAX } from './rpc-session.js';
export type { RequestFailure, MessageRecord, AskContext, RequestOptions, PendingCall, CancelOutcome } from './rpc-session.js';
export type { ExitInfo, StopReport, LeftoverProcess } from './server-process.js';

export interface YepClientOptions {
  /** Request timeouts and the stop escalation's waits run on it (ctx.clock; default the system clock). */
  clock?: Clock;
  /** Cap on one stdout line in bytes (default 8 MiB). Passing it kills the server. */
  maxLineBytes?: number;
  /** Bytes of stderr kept (default 16 KiB). */
  stderrTailBytes?: number;
  /** Default per-request timeout in ms (default 30 s; 0 = none). */
  requestTimeoutMs?: number;
  /** Records kept (default 2000; the oldest go first, problems are kept separately). */
  maxRecords?: number;
  /**
   * Values the server must never get to show (the secrets injected into its
   * environment): redacted from the stderr tail and from the excerpts quoted in
   * problems, before any cut, with what a cut leaves of one masked too.
   */
  secrets?: readonly string[];
  /** Answers the server's `ui/ask`. Without it every ask is answered `cancelled` (the host without a prompt surface). */
  onAsk?: (params: UiAskParams, context: AskContext) => Promise<Partial<UiAskResult>> | Partial<UiAskResult>;
  /** Server notifications other than `tool/update` (status/changed, log, unknown ones), decoded when known. */
  onNotification?: (method: string, params: unknown) => void;
  /** Every message in either direction, as recorded. */
  onMessage?: (record: MessageRecord) => void;
  /** Aborting kills the server and everything it started at once (Ctrl-C forwarding). */
  signal?: AbortSignal;
  /** Starts the server process (ctx.spawn; default node's child_process.spawn). */
  spawn?: Spawn;
  /** A server already started for this launch, taken if it matches it exactly (server-process.ts). */
  adopt?: AdoptableServer;
}

export interface StopOptions {
  /** Send a `shutdown` request first (default true). */
  shutdown?: boolean;
  /** Grace period for each step: shutdown answer, exit after EOF, exit after SIGTERM (default 2000 ms). */
  graceMs?: number;
}

export class YepClient {
  /** Resolves when the server is running; false when it could not start (see exited). Never rejects. */
  readonly spawned: Promise<boolean>;
  /** Resolves once the process has exited or failed to start. Never rejects. */
  readonly exited: Promise<ExitInfo>;

  private readonly process: ServerProcess;
  private readonly session: RpcSession;

  private constructor(launch: ServerLaunch, options: YepClientOptions) {
    const secrets = options.secrets ?? [];
    // The session exists before any process event can fire (they are all asynchronous).
    let session!: RpcSession;
    this.process = new ServerProcess(
      launch,
      {
        ...(options.stderrTailBytes !== undefined ? { stderrTailBytes: options.stderrTailBytes } : {}),
        ...(options.spawn ? { spawn: options.spawn } : {}),
        ...(options.clock ? { clock: options.clock } : {}),
        ...(options.adopt ? { adopt: options.adopt } : {}),
        secrets,
      },
      {
        stdout: (chunk) => session.push(chunk),
        stdoutEnd: () => session.end(),
        stdinError: (reason) => session.stdinClosed(reason),
        exit: () => session.failAll('exited', `the server ${this.process.describeExit()}`),
      },
    );
    session = new RpcSession(this.process, {
      maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
      requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
      maxRecords: options.maxRecords ?? 2000,
      secrets,
      ...(options.onAsk ? { onAsk: options.onAsk } : {}),
      ...(options.onNotification ? { onNotification: options.onNotification } : {}),
      ...(options.onMessage ? { onMessage: options.onMessage } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    });
    this.session = session;
    this.spawned = this.process.spawned;
    this.exited = this.process.exited;
    if (options.signal) {
      if (options.signal.aborted) this.abort();
      else options.signal.addEventListener('abort', () => this.abort(), { once: true });
    }
  }

  /** Spawn a server and return its client. Never throws for a bad command: see `spawned` / `exited`. */
  static start(launch: ServerLaunch, options: YepClientOptions = {}): YepClient {
    return new YepClient(launch, options);
  }

  // ---- state ----------------------------------------------------------

  get records(): MessageRecord[] {
    return this.session.records;
  }

  /** Every problem seen, in order (capped), with the record it came from. */
  get problems(): { seq: number; text: string }[] {
    return this.session.problems;
  }

  get notes(): { seq: number; text: string }[] {
    return this.session.notes;
  }

  /** Problems seen in total (the list itself is capped). */
  get problemTotal(): number {
    return this.session.problemTotal;
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  /** The server's process group id (its pid: it is spawned as a group leader). */
  get pgid(): number | undefined {
    return this.process.pgid;
  }

  get exit(): ExitInfo | undefined {
    return this.process.exit;
  }

  get running(): boolean {
    return this.process.running;
  }

  /** The last bytes the server wrote to stderr (secrets redacted). */
  stderrTail(): string {
    return this.process.stderrTail();
  }

  get stderrBytes(): number {
    return this.process.stderrBytes;
  }

  /** Date.now() at the spawn of an early-started server it adopted (doctor); undefined when it spawned its own. */
  get earlyStartedAt(): number | undefined {
    return this.process.earlyStartedAt;
  }

  /** Milliseconds since start. */
  elapsed(): number {
    return this.process.elapsed();
  }

  // ---- the protocol ---------------------------------------------------

  /** Send a request; the id is known at once (for `cancel`). */
  send<T = unknown>(method: string, params?: unknown, options: RequestOptions = {}): PendingCall<T> {
    return this.session.send<T>(method, params, options);
  }

  /** Send a request and wait for its result. */
  request<T = unknown>(method: string, params?: unknown, options: RequestOptions = {}): Promise<T> {
    return this.session.request<T>(method, params, options);
  }

  /** Send a notification (no answer expected). */
  notify(method: string, params?: unknown): void {
    this.session.notify(method, params);
  }

  /** The handshake: `initialize` (defaults filled in the host's way), then the `initialized` notification. Decoded leniently. */
  initialize(params: Partial<InitializeParams> = {}, options: RequestOptions = {}): Promise<InitializeResult> {
    return this.session.initialize(params, options);
  }

  /** `tool/call`; `onUpdate` receives the streamed `tool/update`s. */
  callTool(name: string, args: unknown, options: RequestOptions & { toolCallId?: string } = {}): PendingCall {
    return this.session.callTool(name, args, options);
  }

  /**
   * `cancel {id}`. A server without cancel support answers -32601 (supported:
   * false). When the server says it cancelled but the call does not resolve
   * within `graceMs` (default 2000), the call fails locally with `cancelled`.
   */
  cancel(id: number, options: { timeoutMs?: number; graceMs?: number } = {}): Promise<CancelOutcome> {
    return this.session.cancel(id, options);
  }

  // ---- stopping -------------------------------------------------------

  /** SIGKILL the server's group and every descendant now. Synchronous: safe in an 'exit' handler. */
  kill(): void {
    this.process.kill();
  }

  /**
   * Graceful stop: `shutdown` request -> close stdin -> SIGTERM -> SIGKILL, each
   * step with a grace period, always on the whole process group; then whatever
   * the server started and left running (in its group or not) is killed and
   * reported.
   */
  stop(options: StopOptions = {}): Promise<StopReport> {
    this.session.stopping = true;
    const graceMs = options.graceMs ?? 2000;
    return this.process.stop({ graceMs, ...(options.shutdown !== false ? { askToExit: () => this.session.shutdown(graceMs) } : {}) });
  }

  private abort(): void {
    this.process.kill();
    this.session.failAll('aborted', 'interrupted');
  }
}
