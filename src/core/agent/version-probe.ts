/**
 * Ask an agent binary its version: `<bin> --version`, bounded. The binary is
 * whatever is on PATH, so it may hang, print megabytes, print garbage or start a
 * daemon: it runs in its own process group with stdin closed, output capped at
 * 4 KiB per stream and a deadline (ctx.waits.agentVersionMs, 3 s), and on either
 * limit the whole group is killed and the answer is "unknown", never an error.
 * Started by the run's spawner (ctx.spawn), like every process yep-ext starts.
 */
import type { ChildProcess } from 'node:child_process';
import type { Spawn } from '../context.js';
import { systemSpawn } from '../spawn.js';
import parse from 'semver/functions/parse.js';
import { signalGroup } from '../yep/process-group.js';

/** What one probe found: a version, or why not (`transient`: worth asking again soon). */
export type ProbeResult = { ok: true; version: string } | { ok: false; reason: string; transient?: boolean };

const PROBE_MAX_OUTPUT = 4096;

// eslint-disable-next-line no-control-regex
const ANSI_RE = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g;
const VERSION_RE = /(?:^|[\s(=:/@])v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)(?=$|[\s),;:])/;

/**
 * The version in `--version` output (`yolop 0.12.1`, `yolop-cli v0.13.0-dev.2 (abc 2026-01-01)`):
 * the first semver token of the first lines, normalised (build metadata dropped,
 * as semver compares without it). Undefined when there is none.
 */
export function parseAgentVersion(output: string): string | undefined {
  const lines = output.replace(ANSI_RE, '').split(/\r?\n/).slice(0, 10);
  for (const line of lines) {
    const m = VERSION_RE.exec(line.trim());
    const v = m ? parse(m[1]!) : null;
    if (v) return v.version;
  }
  return undefined;
}

const seconds = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s` : `${ms} ms`);

/** Run `<file> --version` within the limits above. Never throws. */
export function probeAgentVersion(file: string, env: Record<string, string | undefined>, timeoutMs: number, spawn: Spawn = systemSpawn): Promise<ProbeResult> {
  const group = process.platform !== 'win32';
  return new Promise((resolve) => {
    let settled = false;
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const size = { out: 0, err: 0 };
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let child: ChildProcess;
    let timer: NodeJS.Timeout | undefined;
    let grace: NodeJS.Timeout | undefined;
    try {
      child = spawn(file, ['--version'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: group,
        env: { ...env, NO_COLOR: '1' } as NodeJS.ProcessEnv,
        windowsHide: true,
      });
    } catch (e) {
      resolve({ ok: false, reason: `could not run ${file}: ${(e as Error).message}` });
      return;
    }
    const finish = (result: ProbeResult, kill: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      if (kill && child.pid !== undefined) {
        if (!group || !signalGroup(child.pid, 'SIGKILL')) child.kill('SIGKILL');
      }
      child.stdout?.destroy();
      child.stderr?.destroy();
      // A process that cannot die (uninterruptible sleep) must not keep yep-ext alive.
      child.unref();
      resolve(result);
    };
    const fromOutput = (): ProbeResult => {
      const text = Buffer.concat(out).toString('utf8');
      if (exit && exit.code !== 0)
        return { ok: false, reason: `\`${file} --version\` ${exit.signal ? `was killed by ${exit.signal}` : `exited with status ${exit.code}`}` };
      const version = parseAgentVersion(text) ?? parseAgentVersion(Buffer.concat(err).toString('utf8'));
      return version ? { ok: true, version } : { ok: false, reason: `\`${file} --version\` printed no version number` };
    };
    timer = setTimeout(
      () => finish({ ok: false, reason: `\`${file} --version\` did not answer within ${seconds(timeoutMs)}`, transient: true }, true),
      timeoutMs,
    );
    const capture = (stream: NodeJS.ReadableStream | null, into: Buffer[], key: 'out' | 'err'): void => {
      stream?.on('data', (chunk: Buffer) => {
        size[key] += chunk.length;
        if (size[key] > PROBE_MAX_OUTPUT) {
          finish({ ok: false, reason: `\`${file} --version\` printed more than ${PROBE_MAX_OUTPUT} bytes` }, true);
          return;
        }
        into.push(chunk);
      });
      stream?.on('error', () => undefined);
    };
    capture(child.stdout, out, 'out');
    capture(child.stderr, err, 'err');
    child.on('error', (e: NodeJS.ErrnoException) => finish({ ok: false, reason: `could not run ${file}: ${e.code ?? e.message}` }, false));
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Output may still be in flight: wait for the pipes to close, but not for a
      // background child that inherited them (it is killed with the group: while it
      // holds the pipes the group exists, so its id cannot have been reused).
      grace = setTimeout(() => finish(fromOutput(), true), 250);
    });
    child.on('close', () => finish(fromOutput(), false));
  });
}
