/**
 * doctor's report types and the small helpers every check group shares: the
 * list of checks being built, durations, and how a server's exit or a failed
 * request reads in a check's detail.
 */
import { YepRequestError, type YepClient } from '../yep/client.js';
import type { DoctorMcpServer } from './check-mcp.js';

export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  detail: string;
}

export interface DoctorCallReport {
  tool: string;
  updates: string[];
  result?: unknown;
  error?: string;
  duration_ms?: number;
}

/** The report; `name`, `ok` and `checks` are the host's shape, the rest are extras. */
export interface DoctorReport {
  name: string;
  ok: boolean;
  checks: DoctorCheck[];
  package_dir: string;
  source: 'installed' | 'path';
  /** The server's stderr tail (secrets redacted), present when a check failed. */
  stderr_tail?: string;
  call?: DoctorCallReport;
  /** The MCP servers plugin.json declares, as doctor found them (present when it declares any). */
  mcp_servers?: DoctorMcpServer[];
  /** Messages that broke the protocol, with their sequence number. */
  problems: string[];
  /** Pids (= process group ids) of the server runs. */
  server_pids: number[];
  duration_ms: number;
}

/** The checks of one run, in order. */
export class Report {
  checks: DoctorCheck[] = [];
  add(name: string, status: CheckStatus, detail: string): CheckStatus {
    this.checks.push({ name, status, detail });
    return status;
  }
  get failed(): boolean {
    return this.checks.some((c) => c.status === 'fail');
  }
}

export const ms = (n: number): string => (n >= 1000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`);

/** How the server's process ended, as a phrase after "the server". */
export function describeExit(client: YepClient): string {
  const x = client.exit;
  if (!x) return 'is still running';
  if (x.spawnError) return `could not be started: ${x.spawnError.code ?? ''} ${x.spawnError.message}`.trim();
  return x.signal ? `was killed by ${x.signal} after ${ms(x.at)}` : `exited with code ${x.code} after ${ms(x.at)}`;
}

/** Why a request failed, in a check's words. */
export function describeFailure(e: unknown, client: YepClient): string {
  if (!(e instanceof YepRequestError)) return String((e as Error)?.message ?? e);
  switch (e.kind) {
    case 'timeout': {
      const limit = /within (\d+) ms/.exec(e.message)?.[1];
      return `no answer within ${limit === undefined ? 'the time allowed' : ms(Number(limit))}`;
    }
    case 'exited':
    case 'not-running':
      return `the server ${describeExit(client)}`;
    case 'overflow':
      return e.message.replace(/^[^:]+: /, '');
    default:
      return e.message;
  }
}
