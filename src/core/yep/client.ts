/**
 * A YEP v1 client: starts a capability server the way the host does and speaks
 * the protocol with it. Usable on its own (no oclif, no printing); doctor is
 * built on it.
 *
 * What it guarantees, whatever the server does (hardening F39-F46):
 * - no unhandled 'error' event (spawn failures, EPIPE on stdin);
 * - bounded memory (line cap on stdout, a byte tail of stderr, capped records);
 * - every request settles (answer, remote error, timeout, exit, abort);
 * - the whole process group is gone after stop(), kill(), an abort, or when
 *   this process exits.
 */
import { ChildProcess, spawn } from 'node:child_process';
import {
  CANCELLED_MESSAGE,
  CancelResult,
  ERROR_CODE,
  ErrorObject,
  HOST_FEATURE_TOKENS,
  InitializeResult,
  PROTOCOL_VERSION,
  ToolUpdateParams,
  UiAskParams,
  UiAskResult,
  findMethod,
  type InitializeParams,
} from './protocol.js';
import { DEFAULT_MAX_LINE_BYTES, LineSplitter, encodeMessage, parseLine, snippet } from './framing.js';
import { decodeLenient, errorProblems, payloadProblems } from './validate.js';
import { buildServerEnv, type ServerLaunch } from './server-launch.js';
import { ByteTail } from './stderr-tail.js';
import { listGroup, signalGroup, waitGroupGone } from './process-group.js';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all (ENOENT, EACCES, ENOEXEC…). */
  spawnError?: { code?: string; message: string };
  /** Milliseconds since start. */
  at: number;
}

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

export interface YepClientOptions {
  /** Cap on one stdout line in bytes (default 8 MiB). Passing it kills the server. */
  maxLineBytes?: number;
  /** Bytes of stderr kept (default 16 KiB). */
  stderrTailBytes?: number;
  /** Default per-request timeout in ms (default 30 s; 0 = none). */
  requestTimeoutMs?: number;
  /** Records kept (default 2000; the oldest go first, problems are kept separately). */
  maxRecords?: number;
  /** Answers the server's `ui/ask`. Without it every ask is answered `cancelled` (the host without a prompt surface). */
  onAsk?: (params: UiAskParams, context: AskContext) => Promise<Partial<UiAskResult>> | Partial<UiAskResult>;
  /** Server notifications other than `tool/update` (status/changed, log, unknown ones), decoded when known. */
  onNotification?: (method: string, params: unknown) => void;
  /** Every message in either direction, as recorded. */
  onMessage?: (record: MessageRecord) => void;
  /** Aborting kills the server's process group at once (Ctrl-C forwarding). */
  signal?: AbortSignal;
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

export interface StopOptions {
  /** Send a `shutdown` request first (default true). */
  shutdown?: boolean;
  /** Grace period for each step: shutdown answer, exit after EOF, exit after SIGTERM (default 2000 ms). */
  graceMs?: number;
}

export interface StopReport {
  /** What ended the process: it had already exited, the shutdown request, EOF on stdin, SIGTERM or SIGKILL. */
  endedBy: 'already' | 'shutdown' | 'eof' | 'sigterm' | 'sigkill' | 'never-started';
  /** How the shutdown request went (when sent). */
  shutdown: 'answered' | 'error' | 'no-answer' | 'not-sent';
  exit?: ExitInfo;
  /** Pids of group members still alive after the server exited (then killed). */
  leftovers: number[];
  /** True when the process group is empty at the end. */
  groupGone: boolean;
  durationMs: number;
}

export interface CancelOutcome {
  cancelled: boolean;
  /** False when the server answered -32601 (no cancel support; allowed). */
  supported: boolean;
}

interface Pending {
  method: string;
  resolve(value: unknown): void;
  reject(error: YepRequestError): void;
  timer?: NodeJS.Timeout;
  onUpdate?: (update: ToolUpdateParams) => void;
}

/** Received messages larger than this are recorded without their body. */
export const RECORD_MESSAGE_MAX = 64 * 1024;

const live = new Set<YepClient>();
let exitHookInstalled = false;

/** Kill every live server group if this process exits with servers still running. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const c of live) c.kill();
  });
}

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

export class YepClient {
  readonly records: MessageRecord[] = [];
  /** Every problem seen, in order (capped), with the record it came from. */
  readonly problems: { seq: number; text: string }[] = [];
  readonly notes: { seq: number; text: string }[] = [];
  /** Resolves when the server is running; rejects never (see exited for spawn failures). */
  readonly spawned: Promise<boolean>;
  /** Resolves once the process has exited or failed to start. Never rejects. */
  readonly exited: Promise<ExitInfo>;

  private readonly child: ChildProcess;
  private readonly started = Date.now();
  private readonly opts: Required<Pick<YepClientOptions, 'maxLineBytes' | 'stderrTailBytes' | 'requestTimeoutMs' | 'maxRecords'>> & YepClientOptions;
  private readonly stderr: ByteTail;
  private readonly pending = new Map<number, Pending>();
  /** Ids we gave up on (timeout, cancel, abort) and ids already answered: a later answer is late, not wrong. */
  private readonly settled = new Map<number, 'abandoned' | 'answered'>();
  private nextId = 1;
  private seq = 0;
  private exitInfo?: ExitInfo;
  private stdinOpen = true;
  private askInFlight = false;
  private fatal?: YepRequestError['kind'];
  private fatalMessage = '';
  private stopping?: Promise<StopReport>;
  private resolveExited!: (info: ExitInfo) => void;
  private problemCount = 0;

  private constructor(launch: ServerLaunch, options: YepClientOptions) {
    this.opts = {
      maxLineBytes: DEFAULT_MAX_LINE_BYTES,
      stderrTailBytes: 16 * 1024,
      requestTimeoutMs: 30_000,
      maxRecords: 2000,
      ...options,
    };
    this.stderr = new ByteTail(this.opts.stderrTailBytes);
    this.exited = new Promise((r) => (this.resolveExited = r));
    installExitHook();
    let syncError: NodeJS.ErrnoException | undefined;
    try {
      this.child = spawn(launch.command, launch.args ?? [], {
        cwd: launch.workspaceRoot,
        env: buildServerEnv(launch),
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true, // own process group: signals reach the server's children too
        windowsHide: true,
      });
    } catch (e) {
      // Invalid argv/env (a NUL byte from a manifest or a config value) throws synchronously:
      // report it like any other failure to start.
      syncError = e as NodeJS.ErrnoException;
      this.child = new ChildProcess();
    }
    live.add(this);
    this.spawned = new Promise((resolve) => {
      if (syncError) {
        resolve(false);
        queueMicrotask(() => this.onExit(null, null, { ...(syncError.code ? { code: syncError.code } : {}), message: syncError.message }));
        return;
      }
      this.child.once('spawn', () => resolve(true));
      // `on`, not `once`: a second 'error' with no listener would crash us.
      this.child.on('error', (e: NodeJS.ErrnoException) => {
        // With a pid, the process did start (this is a failed kill): the exit path still runs.
        if (this.child.pid !== undefined) return;
        resolve(false);
        this.onExit(null, null, { ...(e.code ? { code: e.code } : {}), message: e.message });
      });
    });
    this.wireStreams();
    if (options.signal) {
      if (options.signal.aborted) this.abort();
      else options.signal.addEventListener('abort', () => this.abort(), { once: true });
    }
  }

  /** Spawn a server and return its client. Never throws for a bad command: see `spawned` / `exited`. */
  static start(launch: ServerLaunch, options: YepClientOptions = {}): YepClient {
    return new YepClient(launch, options);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The server's process group id (its pid: it is spawned as a group leader). */
  get pgid(): number | undefined {
    return this.child.pid;
  }

  get exit(): ExitInfo | undefined {
    return this.exitInfo;
  }

  get running(): boolean {
    return this.child.pid !== undefined && this.exitInfo === undefined;
  }

  /** The last bytes the server wrote to stderr. */
  stderrTail(): string {
    return this.stderr.text();
  }

  get stderrBytes(): number {
    return this.stderr.total;
  }

  /** Milliseconds since start. */
  elapsed(): number {
    return Date.now() - this.started;
  }

  // ---- outbound -------------------------------------------------------

  /** Send a request; the id is known at once (for `cancel`). */
  send<T = unknown>(method: string, params?: unknown, options: RequestOptions = {}): PendingCall<T> {
    const id = this.nextId++;
    const result = new Promise<T>((resolve, reject) => {
      if (!this.running || this.fatal) {
        const kind = this.fatal ?? (this.exitInfo ? 'exited' : 'not-running');
        reject(new YepRequestError(kind, method, id, this.fatal ? this.fatalMessage : `cannot send ${method}: the server ${this.describeExit()}`));
        return;
      }
      const p: Pending = { method, resolve: resolve as (v: unknown) => void, reject };
      if (options.onUpdate) p.onUpdate = options.onUpdate;
      const timeout = options.timeoutMs ?? this.opts.requestTimeoutMs;
      if (timeout > 0) {
        p.timer = setTimeout(() => this.fail(id, new YepRequestError('timeout', method, id, `no answer to ${method} within ${timeout} ms`)), timeout);
      }
      this.pending.set(id, p);
      if (options.signal) {
        const onAbort = (): void => {
          if (!this.pending.has(id)) return;
          void this.cancel(id, { graceMs: 0 }).catch(() => {});
          this.fail(id, new YepRequestError('cancelled', method, id, `${method} was cancelled`));
        };
        if (options.signal.aborted) queueMicrotask(onAbort);
        else options.signal.addEventListener('abort', onAbort, { once: true });
      }
      this.write({ id, method, ...(params === undefined ? {} : { params }) }, 'request');
    });
    // A PendingCall is often awaited later (after a cancel, say): do not let Node report its
    // rejection as unhandled in between. Awaiting `result` still throws.
    result.catch(() => {});
    return { id, result };
  }

  /** Send a request and wait for its result. */
  request<T = unknown>(method: string, params?: unknown, options: RequestOptions = {}): Promise<T> {
    return this.send<T>(method, params, options).result;
  }

  /** Send a notification (no answer expected). */
  notify(method: string, params?: unknown): void {
    if (!this.running) return;
    this.write({ method, ...(params === undefined ? {} : { params }) }, 'notification');
  }

  /**
   * The handshake: `initialize` (defaults filled in the host's way), then the
   * `initialized` notification. The result is decoded leniently.
   */
  async initialize(params: Partial<InitializeParams> = {}, options: RequestOptions = {}): Promise<InitializeResult> {
    const full = {
      protocol_version: PROTOCOL_VERSION,
      session_id: '',
      workspace_root: '',
      config: null,
      capabilities: [...HOST_FEATURE_TOKENS],
      ...params,
    };
    const raw = await this.request('initialize', full, options);
    this.notify('initialized');
    return decodeLenient(InitializeResult, raw ?? {}).value;
  }

  /** `tool/call`; `onUpdate` receives the streamed `tool/update`s. */
  callTool(name: string, args: unknown, options: RequestOptions & { toolCallId?: string } = {}): PendingCall {
    const toolCallId = options.toolCallId ?? `call-${this.nextId}`;
    return this.send('tool/call', { tool_call_id: toolCallId, name, args: args ?? null }, options);
  }

  /**
   * `cancel {id}`. A server without cancel support answers -32601 (supported:
   * false). When the server says it cancelled but the call does not resolve
   * within `graceMs` (default 2000), the call fails locally with `cancelled`.
   */
  async cancel(id: number, options: { timeoutMs?: number; graceMs?: number } = {}): Promise<CancelOutcome> {
    let outcome: CancelOutcome;
    try {
      const raw = await this.request('cancel', { id }, { timeoutMs: options.timeoutMs ?? this.opts.requestTimeoutMs });
      outcome = { cancelled: decodeLenient(CancelResult, raw ?? {}).value.cancelled, supported: true };
    } catch (e) {
      if (e instanceof YepRequestError && e.kind === 'remote' && e.remote?.code === ERROR_CODE.METHOD_NOT_FOUND) return { cancelled: false, supported: false };
      throw e;
    }
    const target = this.pending.get(id);
    if (outcome.cancelled && target) {
      const grace = options.graceMs ?? 2000;
      const timer = setTimeout(() => this.fail(id, new YepRequestError('cancelled', target.method, id, `${target.method} was cancelled (the server did not resolve it)`)), grace);
      timer.unref();
    }
    return outcome;
  }

  // ---- stopping -------------------------------------------------------

  /** SIGKILL the whole process group now. Synchronous: safe in an 'exit' handler. */
  kill(): void {
    const pgid = this.pgid;
    // Once the server has exited and its group is known empty, the pgid may be reused: never signal it then.
    if (pgid === undefined || (this.exitInfo && !live.has(this))) return;
    signalGroup(pgid, 'SIGKILL');
  }

  /**
   * Graceful stop: `shutdown` request -> close stdin -> SIGTERM -> SIGKILL, each
   * step with a grace period, always on the whole process group; then whatever
   * is left in the group (a forked child holding stdout) is killed and reported.
   */
  stop(options: StopOptions = {}): Promise<StopReport> {
    this.stopping ??= this.doStop(options);
    return this.stopping;
  }

  private async doStop(options: StopOptions): Promise<StopReport> {
    const t0 = Date.now();
    const grace = options.graceMs ?? 2000;
    const pgid = this.pgid;
    if (pgid === undefined) {
      await this.exited;
      return { endedBy: 'never-started', shutdown: 'not-sent', ...(this.exitInfo ? { exit: this.exitInfo } : {}), leftovers: [], groupGone: true, durationMs: Date.now() - t0 };
    }
    const exitedWithin = async (ms: number): Promise<boolean> => {
      if (this.exitInfo) return true;
      return Promise.race([this.exited.then(() => true), delay(ms).then(() => false)]);
    };
    let endedBy: StopReport['endedBy'] = 'already';
    let shutdown: StopReport['shutdown'] = 'not-sent';
    if (this.running) {
      if (options.shutdown !== false && this.stdinOpen) {
        const call = this.send('shutdown', undefined, { timeoutMs: grace });
        shutdown = await Promise.race([
          call.result.then(
            () => 'answered' as const,
            (e: YepRequestError) => (e.kind === 'remote' ? ('error' as const) : ('no-answer' as const)),
          ),
          this.exited.then(() => 'no-answer' as const),
        ]);
        // The answer and the exit may race: give a clean exit a moment to land.
        if (shutdown === 'no-answer' && this.pending.has(call.id)) this.fail(call.id, new YepRequestError('exited', 'shutdown', call.id, 'server exited'));
        endedBy = 'shutdown';
        // A server that answers and then exits by itself should get the credit for it.
        if (shutdown === 'answered') await exitedWithin(100);
      }
      if (!this.exitInfo) {
        endedBy = 'eof';
        this.closeStdin();
        if (!(await exitedWithin(grace))) {
          endedBy = 'sigterm';
          signalGroup(pgid, 'SIGTERM');
          if (!(await exitedWithin(grace))) {
            endedBy = 'sigkill';
            signalGroup(pgid, 'SIGKILL');
            await exitedWithin(5000);
          }
        }
      }
    }
    const leftovers = listGroup(pgid);
    if (leftovers.length > 0) signalGroup(pgid, 'SIGKILL');
    const groupGone = await waitGroupGone(pgid, 2000);
    live.delete(this);
    return { endedBy, shutdown, ...(this.exitInfo ? { exit: this.exitInfo } : {}), leftovers, groupGone, durationMs: Date.now() - t0 };
  }

  // ---- internals ------------------------------------------------------

  private abort(): void {
    this.kill();
    this.failAll('aborted', 'interrupted');
  }

  private describeExit(): string {
    const x = this.exitInfo;
    if (!x) return this.child.pid === undefined ? 'is not running' : 'is running';
    if (x.spawnError) return `could not be started (${x.spawnError.code ?? x.spawnError.message})`;
    return x.signal ? `was killed by ${x.signal}` : `exited with code ${x.code}`;
  }

  private closeStdin(): void {
    if (!this.stdinOpen) return;
    this.stdinOpen = false;
    this.child.stdin?.end();
  }

  private write(message: Record<string, unknown>, kind: MessageRecord['kind']): void {
    const rec = this.record({ direction: 'out', kind, message, ...(typeof message.method === 'string' ? { method: message.method } : {}), ...(typeof message.id === 'number' ? { id: message.id } : {}) });
    if (!this.stdinOpen || !this.child.stdin || this.child.stdin.destroyed) rec.notes.push('not delivered: the server\'s stdin is closed');
    else this.child.stdin.write(encodeMessage(message));
    this.finishRecord(rec);
  }

  private record(partial: Omit<MessageRecord, 'seq' | 'at' | 'problems' | 'notes'> & { problems?: string[]; notes?: string[] }): MessageRecord {
    const rec: MessageRecord = { seq: ++this.seq, at: this.elapsed(), problems: [], notes: [], ...partial };
    this.records.push(rec);
    if (this.records.length > this.opts.maxRecords) this.records.splice(0, this.records.length - this.opts.maxRecords);
    return rec;
  }

  private finishRecord(rec: MessageRecord): void {
    for (const text of rec.problems) {
      this.problemCount++;
      if (this.problems.length < 200) this.problems.push({ seq: rec.seq, text });
    }
    for (const text of rec.notes) if (this.notes.length < 200) this.notes.push({ seq: rec.seq, text });
    this.opts.onMessage?.(rec);
  }

  /** Problems seen in total (the list itself is capped). */
  get problemTotal(): number {
    return this.problemCount;
  }

  private wireStreams(): void {
    const { stdin, stdout, stderr } = this.child;
    // EPIPE/ECONNRESET when the server is gone: never let it crash us.
    stdin?.on('error', (e: NodeJS.ErrnoException) => {
      this.stdinOpen = false;
      const rec = this.record({ direction: 'out', kind: 'malformed' });
      rec.notes.push(`stdin closed by the server (${e.code ?? e.message})`);
      this.finishRecord(rec);
    });
    stderr?.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    stderr?.on('error', () => {});
    const splitter = new LineSplitter(this.opts.maxLineBytes, {
      line: (bytes) => this.onLine(bytes),
      overflow: (seen) => this.onOverflow(seen),
    });
    stdout?.on('data', (chunk: Buffer) => splitter.push(chunk));
    stdout?.on('error', () => {});
    stdout?.on('end', () => {
      const rest = splitter.takeRest();
      if (rest && rest.toString('utf8').trim() !== '') {
        const rec = this.record({ direction: 'in', kind: 'malformed' });
        rec.problems.push(`incomplete line at end of output (no newline): ${snippet(rest.toString('utf8'))}`);
        this.finishRecord(rec);
      }
      this.stdoutEnded = true;
      this.stdoutEndWaiter?.();
    });
    this.child.on('exit', (code, signal) => this.onExit(code, signal));
  }

  private stdoutEnded = false;
  private stdoutEndWaiter?: () => void;

  private onExit(code: number | null, signal: NodeJS.Signals | null, spawnError?: ExitInfo['spawnError']): void {
    if (this.exitInfo) return;
    this.exitInfo = { code, signal, ...(spawnError ? { spawnError } : {}), at: this.elapsed() };
    this.stdinOpen = false;
    const finish = (): void => {
      this.failAll('exited', `the server ${this.describeExit()}`);
      // A forked child may still hold stdout open: stop reading, the session is over.
      this.child.stdout?.destroy();
      this.child.stderr?.destroy();
      this.resolveExited(this.exitInfo!);
      // Keep the exit hook until the group is known to be empty (stop() removes it).
      if (this.child.pid === undefined || listGroup(this.child.pid).length === 0) live.delete(this);
    };
    // 'exit' can come before the last stdout bytes are read: let the pipe drain (bounded,
    // because a grandchild holding stdout keeps it open).
    if (this.stdoutEnded || this.child.stdout === null || spawnError) finish();
    else {
      const timer = setTimeout(finish, 250);
      this.stdoutEndWaiter = () => {
        clearTimeout(timer);
        finish();
      };
    }
  }

  private failAll(kind: YepRequestError['kind'], message: string): void {
    for (const [id, p] of [...this.pending]) this.fail(id, new YepRequestError(kind, p.method, id, `${p.method}: ${message}`));
  }

  private fail(id: number, error: YepRequestError): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (p.timer) clearTimeout(p.timer);
    this.markSettled(id, 'abandoned');
    p.reject(error);
  }

  private markSettled(id: number, how: 'abandoned' | 'answered'): void {
    this.settled.set(id, how);
    if (this.settled.size > 4096) this.settled.delete(this.settled.keys().next().value as number);
  }

  private onOverflow(seen: number): void {
    const rec = this.record({ direction: 'in', kind: 'malformed' });
    rec.problems.push(`a stdout line passed the ${this.opts.maxLineBytes}-byte cap (${seen} bytes without a newline); the server was killed`);
    this.finishRecord(rec);
    this.fatal = 'overflow';
    this.fatalMessage = `the server wrote a line longer than ${this.opts.maxLineBytes} bytes`;
    this.kill();
    this.failAll('overflow', this.fatalMessage);
  }

  private onLine(bytes: Buffer): void {
    if (this.fatal) return;
    const parsed = parseLine(bytes);
    if (parsed.kind === 'blank') return;
    if (parsed.kind === 'malformed') {
      const rec = this.record({ direction: 'in', kind: 'malformed', bytes: bytes.length, problems: [...parsed.problems, parsed.reason] });
      this.finishRecord(rec);
      return;
    }
    // Big payloads (file contents in a tool result) are validated but not kept: records must stay small.
    const rec = this.record({ direction: 'in', kind: parsed.kind, bytes: bytes.length, ...(bytes.length <= RECORD_MESSAGE_MAX ? { message: parsed.value } : {}), problems: [...parsed.problems] });
    if (parsed.kind === 'response') this.onResponse(rec, parsed);
    else if (parsed.kind === 'request') this.onServerRequest(rec, parsed.method, parsed.id, parsed.params);
    else this.onServerNotification(rec, parsed.method, parsed.params);
    this.finishRecord(rec);
  }

  private onResponse(rec: MessageRecord, msg: { id: number; ok: true; result: unknown } | { id: number; ok: false; error: unknown }): void {
    rec.id = msg.id;
    const p = this.pending.get(msg.id);
    if (!p) {
      const was = this.settled.get(msg.id);
      if (was === 'abandoned') rec.notes.push(`late answer to request ${msg.id}, which had already timed out or been cancelled`);
      else if (was === 'answered') rec.problems.push(`second answer to request ${msg.id}`);
      else rec.problems.push(`answer to id ${msg.id}, which we never sent`);
      return;
    }
    rec.method = p.method;
    this.pending.delete(msg.id);
    if (p.timer) clearTimeout(p.timer);
    this.markSettled(msg.id, 'answered');
    if (msg.ok) {
      rec.problems.push(...payloadProblems(p.method, 'result', msg.result).map((s) => `${p.method} result: ${s}`));
      p.resolve(msg.result);
    } else {
      rec.problems.push(...errorProblems(msg.error).map((s) => `${p.method} error: ${s}`));
      const error = decodeLenient(ErrorObject, msg.error).value as ErrorObject;
      const message = typeof error.message === 'string' ? error.message : '(no message)';
      const kind = message === CANCELLED_MESSAGE ? 'cancelled' : 'remote';
      p.reject(new YepRequestError(kind, p.method, msg.id, `${p.method} failed: ${message}${error.code ? ` (code ${error.code})` : ''}`, { ...error, message }));
    }
  }

  private directionProblem(method: string, asKind: 'request' | 'notification'): string | undefined {
    const spec = findMethod(method);
    if (!spec) return undefined;
    if (spec.direction === 'host') return `the server sent ${method}, which only the host sends`;
    if (spec.kind !== asKind) return `${method} is a ${spec.kind} but came as a ${asKind}`;
    return undefined;
  }

  private respond(id: number, body: { result: unknown } | { error: ErrorObject }): void {
    if (!this.running) return;
    this.write({ id, ...body }, 'response');
  }

  private onServerRequest(rec: MessageRecord, method: string, id: number, params: unknown): void {
    rec.method = method;
    rec.id = id;
    const wrong = this.directionProblem(method, 'request');
    if (wrong) rec.problems.push(wrong);
    if (method !== 'ui/ask' || wrong) {
      if (!findMethod(method)) rec.notes.push(`unknown method ${method} (answered -32601)`);
      this.respond(id, { error: { code: ERROR_CODE.METHOD_NOT_FOUND, message: `method not found: ${method}`, retryable: false } });
      return;
    }
    rec.problems.push(...payloadProblems(method, 'params', params).map((s) => `ui/ask params: ${s}`));
    const ask = decodeLenient(UiAskParams, params ?? {}).value;
    const cancelled: UiAskResult = { answer: '', cancelled: true };
    // One prompt at a time; no handler = no prompt surface: both answer `cancelled` (host rule).
    if (!this.opts.onAsk || this.askInFlight || this.stopping) {
      this.respond(id, { result: cancelled });
      return;
    }
    this.askInFlight = true;
    const ac = new AbortController();
    void this.exited.then(() => ac.abort());
    Promise.resolve()
      .then(() => this.opts.onAsk!(ask, { signal: ac.signal }))
      .then(
        (answer) => this.respond(id, { result: decodeLenient(UiAskResult, answer ?? {}).value }),
        () => this.respond(id, { result: cancelled }),
      )
      .finally(() => (this.askInFlight = false));
  }

  private onServerNotification(rec: MessageRecord, method: string, params: unknown): void {
    rec.method = method;
    const wrong = this.directionProblem(method, 'notification');
    if (wrong) {
      rec.problems.push(wrong);
      return;
    }
    const spec = findMethod(method);
    if (!spec) {
      rec.notes.push(`unknown notification ${method} (ignored)`);
      this.opts.onNotification?.(method, params);
      return;
    }
    rec.problems.push(...payloadProblems(method, 'params', params).map((s) => `${method} params: ${s}`));
    const decoded = spec.params ? decodeLenient(spec.params, params ?? {}).value : params;
    if (method === 'tool/update') {
      const update = decoded as ToolUpdateParams;
      const target = this.pending.get(update.request_id);
      if (!target) rec.notes.push(`tool/update for request ${update.request_id}, which is not in flight (dropped)`);
      else target.onUpdate?.(update);
      return;
    }
    this.opts.onNotification?.(method, decoded);
  }
}
