/**
 * How a command that changes several extensions ends after Ctrl-C: E_INTERRUPTED (exit 130,
 * docs/exit-codes.md), never E_PARTIAL. What was committed before the interruption stays
 * committed, as npm and cargo keep the packages they finished (each commit is whole, and the
 * agent may already load it); what was in flight was rolled back by its own cleanup, and
 * nothing else started. The message names both, and the details list them for --json.
 */
import { YepError } from '../core/errors.js';

export function interruptedRun(signal: AbortSignal, verb: 'installed' | 'updated' | 'removed', done: string[], stopped: string[]): YepError | undefined {
  if (!signal.aborted) return undefined;
  const kept =
    done.length > 0 ? `${done.join(', ')} ${done.length === 1 ? 'was' : 'were'} ${verb} before it and ${done.length === 1 ? 'stays' : 'stay'}; ` : '';
  const rest =
    stopped.length > 0
      ? `${stopped.join(', ')} ${stopped.length === 1 ? 'was' : 'were'} not ${verb} (nothing of ${stopped.length === 1 ? 'it' : 'them'} was changed)`
      : `nothing else was ${verb}`;
  return new YepError('E_INTERRUPTED', `Interrupted: ${kept}${rest}.`, {
    hint: 'Run the command again to finish: what was interrupted was rolled back.',
    details: { [verb]: done, interrupted: stopped },
  });
}
