/** The pure parts of the wait display (status-area.ts) and the logger's modes (stderr-logger.ts). */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatBytes, formatDuration, formatStepLine, type LiveStep } from '../../src/cli/status-area.js';
import { stderrLogger } from '../../src/cli/stderr-logger.js';
import type { OutStream } from '../../src/cli/cli-io.js';

const live = (state: LiveStep['state'], started = 0, samples: LiveStep['samples'] = []): LiveStep => ({
  label: 'Downloading greet 0.1.0',
  state,
  started,
  samples,
});

describe('formatStepLine', () => {
  it('shows bytes, rate and ETA for a download', () => {
    const l = live({ unit: 'bytes', done: 2 << 20, total: 4 << 20 }, 0, [
      { t: 0, done: 0 },
      { t: 2000, done: 2 << 20 },
    ]);
    expect(formatStepLine(l, 2000)).toBe('Downloading greet 0.1.0  2.0 MiB / 4.0 MiB  1.0 MiB/s  ETA 2s (2s)');
  });

  it('shows the countdown to the deadline of a wait without data', () => {
    expect(formatStepLine(live({ deadlineAt: 30_000 }), 5_000)).toBe('Downloading greet 0.1.0 (5s, gives up in 25s)');
  });

  it('shows the retry reason and the countdown to the next attempt instead of the deadline', () => {
    expect(formatStepLine(live({ deadlineAt: 99_000, retryAt: 7_000, detail: 'attempt 2/3' }), 4_000)).toBe(
      'Downloading greet 0.1.0 (4s, attempt 2/3, next attempt in 3s)',
    );
  });

  it('hides a flowing download’s distant deadline', () => {
    const l = live({ unit: 'bytes', done: 100, deadlineAt: 600_000 }, 0, [{ t: 0, done: 100 }]);
    expect(formatStepLine(l, 1000)).not.toMatch(/gives up/);
  });

  it('formats sizes and durations', () => {
    expect([formatBytes(10), formatBytes(2048), formatBytes(20 << 10), formatBytes(3 << 20)]).toEqual(['10 B', '2.0 KiB', '20 KiB', '3.0 MiB']);
    expect([formatDuration(1), formatDuration(65_000), formatDuration(3_720_000)]).toEqual(['1s', '1m 05s', '1h 02m']);
  });
});

describe('stderrLogger', () => {
  afterEach(() => vi.restoreAllMocks());
  /** A stderr that is no terminal, recording what is written. */
  const capture = (): { out: string[]; stream: OutStream } => {
    const out: string[] = [];
    return { out, stream: { write: (s) => out.push(s), isTTY: false, columns: 0, color: false } };
  };

  it('is silent about steps without a terminal unless --verbose asks for a line per step', () => {
    const { out, stream } = capture();
    const quiet = stderrLogger({ out: stream });
    const s = quiet.step!('Fetching the index');
    s.note('503; attempt 2/3 in 1s');
    s.end();
    expect(out).toEqual([]);
    const verbose = stderrLogger({ out: stream, verbose: true });
    const v = verbose.step!('Fetching the index');
    v.note('503; attempt 2/3 in 1s');
    v.end();
    expect(out.join('')).toMatch(/^Fetching the index…\n {2}retry: 503; attempt 2\/3 in 1s\nFetching the index: done \(\d+s\)\n$/);
  });

  it('--quiet keeps warnings and drops info, steps and verbose lines', () => {
    const { out, stream } = capture();
    const log = stderrLogger({ out: stream, quiet: true, verbose: false });
    log.info('note');
    log.verbose!('GET x');
    log.step!('x').end();
    log.warn('careful');
    expect(out.join('')).toMatch(/careful/);
    expect(out.join('')).not.toMatch(/note|GET|x…/);
  });
});
