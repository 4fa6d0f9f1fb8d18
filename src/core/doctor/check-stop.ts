/**
 * The check groups at the end of a run: `shutdown` and `stdin_eof` (how each
 * run stopped), `messages` (every message of every run against the schema) and
 * `processes` (nothing the server started is left: its process group, and on
 * Linux every descendant, other sessions and groups included).
 */
import { truncateRedacted } from '../text/redact.js';
import type { LeftoverProcess, StopReport, YepClient } from '../yep/client.js';
import { describeExit, ms, type Report } from './report.js';

/** Stop a run and grade it as `shutdown` (shutdown request first) or `stdin_eof` (EOF only). */
export async function stopAndGrade(client: YepClient, report: Report, graceMs: number, as: 'shutdown' | 'stdin_eof'): Promise<StopReport> {
  const wasRunning = client.running;
  const r = await client.stop({ graceMs, shutdown: as === 'shutdown' });
  if (!wasRunning) {
    report.add(as, 'fail', `the server ${describeExit(client)} before ${as === 'shutdown' ? 'yolop asked it to stop' : 'its input was closed'}`);
    return r;
  }
  const after = `after ${ms(r.durationMs)}`;
  if (as === 'shutdown') {
    const answered =
      r.shutdown === 'answered'
        ? 'answered the stop request (shutdown)'
        : r.shutdown === 'error'
          ? 'answered the stop request (shutdown) with an error'
          : 'did not answer the stop request (shutdown)';
    if (r.endedBy === 'shutdown' || r.endedBy === 'eof') {
      const how = r.endedBy === 'shutdown' ? 'exited' : 'exited once its input closed';
      report.add(
        'shutdown',
        r.shutdown === 'answered' ? 'pass' : 'warn',
        `${answered} and ${how} ${after}${r.shutdown === 'answered' ? '' : ': answer shutdown with {}'}`,
      );
    } else if (r.endedBy === 'sigterm')
      report.add(
        'shutdown',
        'fail',
        `${answered} but kept running, also once its input closed; doctor stopped it with SIGTERM ${after}: exit after answering shutdown`,
      );
    else
      report.add(
        'shutdown',
        'fail',
        `${answered} but kept running, also once its input closed and after SIGTERM; doctor killed it (SIGKILL) ${after}: exit after answering shutdown`,
      );
  } else if (r.endedBy === 'eof') report.add('stdin_eof', 'pass', `exited when its input closed, ${after}`);
  else if (r.endedBy === 'sigterm')
    report.add(
      'stdin_eof',
      'fail',
      `kept running after its input closed; doctor stopped it with SIGTERM ${after}: yolop may stop a server just by closing its input, so exit when stdin ends`,
    );
  else if (r.endedBy === 'sigkill')
    report.add(
      'stdin_eof',
      'fail',
      `kept running after its input closed and ignored SIGTERM; doctor killed it (SIGKILL) ${after}: yolop may stop a server just by closing its input, so exit when stdin ends`,
    );
  else report.add('stdin_eof', 'fail', `the server ${describeExit(client)}`);
  return r;
}

/** `messages`: every message of every run was valid YEP v1. */
export function checkMessages(report: Report, clients: readonly YepClient[]): void {
  const problemTotal = clients.reduce((n, c) => n + c.problemTotal, 0);
  const received = clients.reduce((n, c) => n + c.records.filter((r) => r.direction === 'in' && r.kind !== 'malformed').length, 0);
  if (problemTotal === 0) {
    report.add('messages', 'pass', `${received} message(s), all in the form the protocol defines (schema/yep/v1/schema.json)`);
    return;
  }
  const firstFew = clients.flatMap((c) => c.problems.map((p) => p.text)).slice(0, 3);
  report.add(
    'messages',
    'fail',
    `${problemTotal} problem(s) in what the server wrote: ${firstFew.join(' | ')}${problemTotal > 3 ? ' | …' : ''}. Each line on stdout must be one protocol message as schema/yep/v1/schema.json describes it; log to stderr`,
  );
}

/** `processes`: nothing the server started outlived it; names every process that did (doctor killed them). */
export function checkProcesses(report: Report, stops: readonly StopReport[], secrets: readonly string[]): void {
  const name = (p: LeftoverProcess): string =>
    `pid ${p.pid} (${truncateRedacted(p.command, 80, secrets, { marker: () => '…' })}${p.inGroup ? '' : ', outside its process group'})`;
  const list = (ps: readonly LeftoverProcess[]): string => {
    const shown = ps.slice(0, 5).map(name).join(', ');
    return ps.length > 5 ? `${shown} and ${ps.length - 5} more` : shown;
  };
  const survivors = stops.flatMap((r) => r.survivors);
  const descendants = stops.flatMap((r) => r.descendants);
  const escaped = descendants.filter((p) => !p.inGroup);
  if (survivors.length) {
    report.add('processes', 'fail', `processes the server started survived SIGKILL: ${list(survivors)}`);
  } else if (stops.some((r) => !r.groupGone)) {
    report.add('processes', 'fail', "processes of the server's group survived SIGKILL");
  } else if (escaped.length) {
    report.add(
      'processes',
      'fail',
      `the server left ${descendants.length} process(es) running that would outlive it, ${escaped.length} of them outside its process group (another session or group): ${list(descendants)}; doctor killed them. Wait for your child processes before exiting, and do not run them as daemons`,
    );
  } else if (descendants.length) {
    report.add(
      'processes',
      'fail',
      `the server exited but left ${descendants.length} process(es) of its group running: ${list(descendants)}; doctor killed them. Wait for your child processes before exiting`,
    );
  } else report.add('processes', 'pass', 'nothing left running (no process the server started is alive)');
}
