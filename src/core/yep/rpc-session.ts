/**
 * The protocol half of a YEP client: one session over a line transport (the
 * server's stdin and stdout, owned by server-process.ts). It frames and parses
 * lines, numbers requests, matches answers by id (in any order), times requests
 * out, answers the server's own requests (`ui/ask`, unknown methods), routes
 * `tool/update` streams to their call, and records every message with the
 * protocol problems found in it.
 *
 * Every request settles (answer, remote error, timeout, exit, abort), and
 * records and problem lists stay bounded. Text quoted from the server in a
 * problem never carries one of `secrets` (framing.ts snippet).
 */
import {
  CANCELLED_MESSAGE,
  CancelResult,
  ERROR_CODE,
  ErrorObject,
  HOST_FEATURE_TOKENS,
  InitializeResult,
  PROTOCOL_VERSION,
  UiAskParams,
  UiAskResult,
  findMethod,
  type InitializeParams,
  type ToolUpdateParams,
} from './protocol.js';
import {
  YepRequestError,
  type CancelOutcome,
  type MessageRecord,
  type PendingCall,
  type RequestFailure,
  type RequestOptions,
  type SessionOptions,
  type SessionTransport,
} from './rpc-types.js';

export { YepRequestError } from './rpc-types.js';
export type { AskContext, CancelOutcome, MessageRecord, PendingCall, RequestFailure, RequestOptions, SessionOptions, SessionTransport } from './rpc-types.js';
import { systemClock, type Clock } from '../clock.js';
import { LineSplitter, encodeMessage, parseLine, snippet, SNIPPET_CHARS } from './framing.js';
import { decodeLenient, errorProblems, payloadProblems } from './validate.js';

interface Pending {
  method: string;
  resolve(value: unknown): void;
  reject(error: YepRequestError): void;
  /** Cancels the request's timeout. */
  cancelTimer?: () => void;
  onUpdate?: (update: ToolUpdateParams) => void;
}

/** Received messages larger than this are recorded without their body. */
export const RECORD_MESSAGE_MAX = 64 * 1024;

export class RpcSession {
  readonly records: MessageRecord[] = [];
  /** Every problem seen, in order (capped), with the record it came from. */
  readonly problems: { seq: number; text: string }[] = [];
  readonly notes: { seq: number; text: string }[] = [];

  private readonly pending = new Map<number, Pending>();
  /** Ids we gave up on (timeout, cancel, abort) and ids already answered: a later answer is late, not wrong. */
  private readonly settled = new Map<number, 'abandoned' | 'answered'>();
  private readonly splitter: LineSplitter;
  private readonly secrets: readonly string[];
  private nextId = 1;
  private seq = 0;
  private askInFlight = false;
  private fatal?: RequestFailure;
  private fatalMessage = '';
  private problemCount = 0;
  /** Set once the client is stopping: a `ui/ask` then gets `cancelled` at once. */
  stopping = false;
  private readonly clock: Clock;

  constructor(
    private readonly transport: SessionTransport,
    private readonly opts: SessionOptions,
  ) {
    this.secrets = opts.secrets ?? [];
    this.clock = opts.clock ?? systemClock;
    this.splitter = new LineSplitter(opts.maxLineBytes, {
      line: (bytes) => this.onLine(bytes),
      overflow: (seen) => this.onOverflow(seen),
    });
  }

  /** Problems seen in total (the list itself is capped). */
  get problemTotal(): number {
    return this.problemCount;
  }

  /** True when a request is waiting for this id. */
  isPending(id: number): boolean {
    return this.pending.has(id);
  }

  // ---- inbound bytes and transport events -----------------------------

  push(chunk: Buffer): void {
    this.splitter.push(chunk);
  }

  /** stdout ended: an unterminated last line is a problem. */
  end(): void {
    const rest = this.splitter.takeRest();
    if (rest && rest.toString('utf8').trim() !== '') {
      const rec = this.record({ direction: 'in', kind: 'malformed' });
      rec.problems.push(`incomplete line at end of output (no newline): ${snippet(rest.toString('utf8'), SNIPPET_CHARS, this.secrets)}`);
      this.finishRecord(rec);
    }
  }

  stdinClosed(reason: string): void {
    const rec = this.record({ direction: 'out', kind: 'malformed' });
    rec.notes.push(`stdin closed by the server (${reason})`);
    this.finishRecord(rec);
  }

  /** Fail every pending request with `kind`. */
  failAll(kind: RequestFailure, message: string): void {
    for (const [id, p] of [...this.pending]) this.fail(id, new YepRequestError(kind, p.method, id, `${p.method}: ${message}`));
  }

  // ---- outbound -------------------------------------------------------

  /** Send a request; the id is known at once (for `cancel`). */
  send<T = unknown>(method: string, params?: unknown, options: RequestOptions = {}): PendingCall<T> {
    const id = this.nextId++;
    const result = new Promise<T>((resolve, reject) => {
      if (!this.transport.running || this.fatal) {
        const kind = this.fatal ?? (this.transport.hasExited ? 'exited' : 'not-running');
        reject(new YepRequestError(kind, method, id, this.fatal ? this.fatalMessage : `cannot send ${method}: the server ${this.transport.describeExit()}`));
        return;
      }
      const p: Pending = { method, resolve: resolve as (v: unknown) => void, reject };
      if (options.onUpdate) p.onUpdate = options.onUpdate;
      const timeout = options.timeoutMs ?? this.opts.requestTimeoutMs;
      if (timeout > 0) {
        p.cancelTimer = this.clock.timeout(
          () => this.fail(id, new YepRequestError('timeout', method, id, `no answer to ${method} within ${timeout} ms`)),
          timeout,
        );
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

  request<T = unknown>(method: string, params?: unknown, options: RequestOptions = {}): Promise<T> {
    return this.send<T>(method, params, options).result;
  }

  notify(method: string, params?: unknown): void {
    if (!this.transport.running) return;
    this.write({ method, ...(params === undefined ? {} : { params }) }, 'notification');
  }

  /** The handshake: `initialize` (defaults filled in the host's way), then `initialized`. Decoded leniently. */
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

  callTool(name: string, args: unknown, options: RequestOptions & { toolCallId?: string } = {}): PendingCall {
    const toolCallId = options.toolCallId ?? `call-${this.nextId}`;
    return this.send('tool/call', { tool_call_id: toolCallId, name, args: args ?? null }, options);
  }

  /** `cancel {id}`; see YepClient.cancel. */
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
      this.clock.timeout(
        () => this.fail(id, new YepRequestError('cancelled', target.method, id, `${target.method} was cancelled (the server did not resolve it)`)),
        grace,
        { unref: true },
      );
    }
    return outcome;
  }

  /**
   * The `shutdown` request as the first step of a stop: how it went, waiting at
   * most `graceMs` and no longer than the server lives.
   */
  async shutdown(graceMs: number): Promise<'answered' | 'error' | 'no-answer'> {
    const call = this.send('shutdown', undefined, { timeoutMs: graceMs });
    const outcome = await Promise.race([
      call.result.then(
        () => 'answered' as const,
        (e: YepRequestError) => (e.kind === 'remote' ? ('error' as const) : ('no-answer' as const)),
      ),
      this.transport.exited.then(() => 'no-answer' as const),
    ]);
    if (outcome === 'no-answer' && this.pending.has(call.id)) this.fail(call.id, new YepRequestError('exited', 'shutdown', call.id, 'server exited'));
    return outcome;
  }

  // ---- internals ------------------------------------------------------

  private write(message: Record<string, unknown>, kind: MessageRecord['kind']): void {
    const rec = this.record({
      direction: 'out',
      kind,
      message,
      ...(typeof message.method === 'string' ? { method: message.method } : {}),
      ...(typeof message.id === 'number' ? { id: message.id } : {}),
    });
    if (!this.transport.write(encodeMessage(message))) rec.notes.push("not delivered: the server's stdin is closed");
    this.finishRecord(rec);
  }

  private record(partial: Omit<MessageRecord, 'seq' | 'at' | 'problems' | 'notes'> & { problems?: string[]; notes?: string[] }): MessageRecord {
    const rec: MessageRecord = { seq: ++this.seq, at: this.transport.elapsed(), problems: [], notes: [], ...partial };
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

  private fail(id: number, error: YepRequestError): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    p.cancelTimer?.();
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
    this.transport.kill();
    this.failAll('overflow', this.fatalMessage);
  }

  private onLine(bytes: Buffer): void {
    if (this.fatal) return;
    const parsed = parseLine(bytes, this.secrets);
    if (parsed.kind === 'blank') return;
    if (parsed.kind === 'malformed') {
      const rec = this.record({ direction: 'in', kind: 'malformed', bytes: bytes.length, problems: [...parsed.problems, parsed.reason] });
      this.finishRecord(rec);
      return;
    }
    // Big payloads (file contents in a tool result) are validated but not kept: records must stay small.
    const rec = this.record({
      direction: 'in',
      kind: parsed.kind,
      bytes: bytes.length,
      ...(bytes.length <= RECORD_MESSAGE_MAX ? { message: parsed.value } : {}),
      problems: [...parsed.problems],
    });
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
    p.cancelTimer?.();
    this.markSettled(msg.id, 'answered');
    if (msg.ok) {
      rec.problems.push(...payloadProblems(p.method, 'result', msg.result).map((s) => `${p.method} result: ${s}`));
      p.resolve(msg.result);
    } else {
      rec.problems.push(...errorProblems(msg.error).map((s) => `${p.method} error: ${s}`));
      const error = decodeLenient(ErrorObject, msg.error).value as ErrorObject;
      const message = typeof error.message === 'string' ? error.message : '(no message)';
      const kind = message === CANCELLED_MESSAGE ? 'cancelled' : 'remote';
      p.reject(
        new YepRequestError(kind, p.method, msg.id, `${p.method} failed: ${message}${error.code ? ` (code ${error.code})` : ''}`, { ...error, message }),
      );
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
    if (!this.transport.running) return;
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
    void this.transport.exited.then(() => ac.abort());
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
