/**
 * The MCP SDK's client speaking to a stdio MCP server that runs under yep-ext's
 * one server supervisor (yep/server-process.ts): the same spawn rules, process
 * group, /proc tracking of descendants and stop sequence as a capability server,
 * so a contributed MCP server leaves nothing behind either. The SDK's own
 * StdioClientTransport spawns without a process group and kills only the child.
 * Framing is MCP's stdio framing (one JSON-RPC message per line, checked with the
 * SDK's message schema); a line that is not an MCP message is counted and quoted
 * (redacted, then cut), not fatal, as the SDK's own stdio transport skips it.
 */
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Clock } from '../clock.js';
import type { Spawn } from '../context.js';
import { truncateRedacted } from '../text/redact.js';
import type { ServerLaunch } from '../yep/server-launch.js';
import { ServerProcess, type StopReport } from '../yep/server-process.js';

/** The cap on one stdout line; a server past it is killed (as a capability server is). */
const MAX_LINE_BYTES = 8 * 1024 * 1024;

export interface ProcessTransportOptions {
  secrets: readonly string[];
  spawn?: Spawn;
  clock?: Clock;
  stderrTailBytes?: number;
}

export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  /** Lines on stdout that were not MCP messages (quoted, redacted, cut). */
  readonly badLines: string[] = [];
  badLineCount = 0;
  private process?: ServerProcess;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private closed = false;

  constructor(
    private readonly launch: ServerLaunch,
    private readonly options: ProcessTransportOptions,
  ) {}

  get pid(): number | undefined {
    return this.process?.pid;
  }

  get running(): boolean {
    return this.process?.running ?? false;
  }

  /** How the process ended, as a phrase after "the server". */
  describeExit(): string {
    return this.process?.describeExit() ?? 'was never started';
  }

  stderrTail(): string {
    return this.process?.stderrTail() ?? '';
  }

  async start(): Promise<void> {
    if (this.process) throw new Error('the transport is already started');
    const p = new ServerProcess(
      this.launch,
      {
        secrets: this.options.secrets,
        ...(this.options.spawn ? { spawn: this.options.spawn } : {}),
        ...(this.options.clock ? { clock: this.options.clock } : {}),
        stderrTailBytes: this.options.stderrTailBytes ?? 4096,
      },
      {
        stdout: (chunk) => this.onStdout(chunk),
        stdoutEnd: () => undefined,
        stdinError: (reason) => this.onerror?.(new Error(`the server closed its input (${reason})`)),
        exit: () => this.finish(),
      },
    );
    this.process = p;
    if (!(await p.spawned)) throw new Error(`the server ${p.describeExit()}`);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.process?.write(serializeMessage(message))) throw new Error(`the server ${this.describeExit()}`);
  }

  /** Close stdin, then SIGTERM, then SIGKILL the group (graceMs each); everything it started is reaped and reported. */
  stop(graceMs: number): Promise<StopReport> | undefined {
    return this.process?.stop({ graceMs });
  }

  /** SIGKILL the group and every tracked descendant now. */
  kill(): void {
    this.process?.kill();
  }

  async close(): Promise<void> {
    // The SDK's Client.close(): the caller stops the process with stop() for a report; here, make sure.
    this.kill();
    this.finish();
  }

  private onStdout(chunk: Buffer): void {
    let rest = chunk;
    for (let nl = rest.indexOf(0x0a); nl !== -1; nl = rest.indexOf(0x0a)) {
      const line = Buffer.concat([...this.pending, rest.subarray(0, nl)])
        .toString('utf8')
        .replace(/\r$/, '');
      this.pending = [];
      this.pendingBytes = 0;
      rest = rest.subarray(nl + 1);
      if (line.trim() !== '') this.onLine(line);
    }
    if (rest.length === 0) return;
    this.pending.push(rest);
    this.pendingBytes += rest.length;
    if (this.pendingBytes > MAX_LINE_BYTES) {
      this.pending = [];
      this.pendingBytes = 0;
      this.onerror?.(new Error(`the server wrote a line longer than ${MAX_LINE_BYTES} bytes to stdout; it was stopped`));
      this.kill();
    }
  }

  private onLine(line: string): void {
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line));
    } catch {
      this.badLineCount++;
      if (this.badLines.length < 3) this.badLines.push(truncateRedacted(line, 120, this.options.secrets, { marker: () => '…' }));
      return;
    }
    this.onmessage?.(message);
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
