import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { YepClient, YepRequestError } from '../../src/core/yep/client.js';
import { isGroupAlive } from '../../src/core/yep/process-group.js';

const FIXTURES = resolve(import.meta.dirname, '../fixtures/servers');
const work = mkdtempSync(join(tmpdir(), 'yep-client-'));
const started: YepClient[] = [];

/** The client against an sh fixture server: what is tested is the client, and an sh server starts for a sliver of a Node one's CPU. */
function start(script: string, options: Parameters<typeof YepClient.start>[1] = {}, extraArgs: string[] = []): YepClient {
  const c = YepClient.start({ command: '/bin/sh', args: [join(FIXTURES, script), ...extraArgs], packageDir: work, workspaceRoot: work }, options);
  started.push(c);
  return c;
}

afterEach(async () => {
  for (const c of started.splice(0)) {
    await c.stop({ graceMs: 200 });
    expect(isGroupAlive(c.pgid!)).toBe(false);
  }
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('YepClient against a real server process', () => {
  it('handshakes, multiplexes requests and matches out-of-order answers by id', async () => {
    const c = start('multi.sh');
    const init = await c.initialize({ session_id: 't' });
    expect(init.name).toBe('multi');
    expect(init.capability_params?.tools?.map((t) => t.name)).toContain('sleep');
    const slow = c.callTool('sleep', { ms: 150, text: 'slow' });
    const fast = c.callTool('sleep', { ms: 10, text: 'fast' });
    const order: string[] = [];
    const noted = <T>(name: string, r: T): T => {
      order.push(name);
      return r;
    };
    const both = await Promise.all([slow.result.then((r) => noted('slow', r)), fast.result.then((r) => noted('fast', r))]);
    expect(both).toEqual([{ text: 'slow' }, { text: 'fast' }]);
    expect(order).toEqual(['fast', 'slow']);
    // Ids are integers from 1 per direction: initialize=1, then the two calls.
    expect([slow.id, fast.id]).toEqual([2, 3]);
    expect(c.problems).toEqual([]);
  });

  it('streams tool/update notifications to the call they belong to', async () => {
    const c = start('multi.sh');
    await c.initialize();
    const a: string[] = [];
    const b: string[] = [];
    const callA = c.callTool('stream', { count: 3 }, { onUpdate: (u) => a.push(u.output) });
    const callB = c.callTool('stream', { count: 2 }, { onUpdate: (u) => b.push(u.output) });
    expect(await callA.result).toEqual({ done: 3 });
    expect(await callB.result).toEqual({ done: 2 });
    expect(a).toEqual(['step 1/3', 'step 2/3', 'step 3/3']);
    expect(b).toEqual(['step 1/2', 'step 2/2']);
  });

  it('cancels an in-flight call: cancel answers true and the call fails with `cancelled`', async () => {
    const c = start('multi.sh');
    await c.initialize();
    const call = c.callTool('wait_cancel', {});
    await new Promise((r) => setTimeout(r, 50));
    expect(await c.cancel(call.id)).toEqual({ cancelled: true, supported: true });
    const err = await call.result.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(YepRequestError);
    expect((err as YepRequestError).kind).toBe('cancelled');
    expect(await c.cancel(12345)).toEqual({ cancelled: false, supported: true });
  });

  it('answers a reverse ui/ask with the handler, and `cancelled` without one', async () => {
    const asked: unknown[] = [];
    const c = start('multi.sh', {
      onAsk: (p) => {
        asked.push(p);
        return { answer: `hello ${p.prompt}` };
      },
    });
    await c.initialize();
    expect(await c.callTool('ask', { prompt: 'name?' }).result).toEqual({ answer: 'hello name?', cancelled: false });
    expect(asked).toEqual([{ prompt: 'name?', secret: true }]);

    const bare = start('multi.sh');
    await bare.initialize();
    expect(await bare.callTool('ask', { prompt: 'x' }).result).toEqual({ answer: '', cancelled: true });
  });

  it('answers an unknown reverse request with -32601', async () => {
    const c = start('multi.sh');
    await c.initialize();
    const r = (await c.callTool('reverse_unknown', {}).result) as { got: { error: { code: number } } };
    expect(r.got.error.code).toBe(-32601);
    expect(c.notes.map((n) => n.text).join()).toContain('unknown method fixture/bogus');
  });

  it('times a request out, keeps the connection, and treats a late answer as late', async () => {
    const c = start('multi.sh');
    await c.initialize();
    const err = await c.request('tool/call', { name: 'sleep', args: { ms: 300, text: 'late' } }, { timeoutMs: 50 }).catch((e: unknown) => e);
    expect((err as YepRequestError).kind).toBe('timeout');
    // It gave up without waiting for the answer: none had arrived for that request when it
    // failed. (This was "within 250 ms" of wall time, which a loaded machine can overrun
    // with the timeout firing at 50 ms as it should; an answer waited for would be recorded.)
    const answered = (id: number): boolean => c.records.some((r) => r.direction === 'in' && r.kind === 'response' && r.id === id);
    expect(answered((err as YepRequestError).id)).toBe(false);
    const hang = await c.request('tool/call', { name: 'hang' }, { timeoutMs: 50 }).catch((e: unknown) => e);
    expect((hang as YepRequestError).kind).toBe('timeout');
    // The connection still works, and the late answer is not a protocol problem.
    expect(await c.callTool('echo', { text: 'still here' }).result).toEqual({ text: 'still here' });
    // Until the late answer is in (the server sleeps 300 ms: no fixed wait, which load can outlast).
    const deadline = Date.now() + 20_000;
    while (!answered((err as YepRequestError).id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(answered((err as YepRequestError).id), 'the late answer arrived').toBe(true);
    expect(c.problems).toEqual([]);
    expect(c.notes.map((n) => n.text).join()).toContain('late answer');
  });

  it('fails every in-flight request when the server dies mid-request, with exit code and stderr', async () => {
    const c = start('multi.sh');
    await c.initialize();
    const pending = c.callTool('hang', {});
    const dying = c.callTool('die', { code: 3 });
    const [e1, e2] = await Promise.all([pending.result.catch((e: unknown) => e), dying.result.catch((e: unknown) => e)]);
    expect((e1 as YepRequestError).kind).toBe('exited');
    expect((e2 as YepRequestError).kind).toBe('exited');
    expect((e2 as Error).message).toContain('exited with code 3');
    const exit = await c.exited;
    expect(exit.code).toBe(3);
    expect(c.stderrTail()).toContain('dying on purpose');
    expect(c.problems.map((p) => p.text).join()).toContain('incomplete line');
    // Writing to a dead server is refused, not a crash (no EPIPE escapes).
    expect(((await c.request('tool/call', {}).catch((e: unknown) => e)) as YepRequestError).kind).toBe('exited');
  });

  it('survives EPIPE: a server that closed its stdin gets requests that fail, not a crash', async () => {
    const logs: unknown[] = [];
    let closed!: () => void;
    const stdinClosed = new Promise<void>((r) => (closed = r));
    const c = start('closes-stdin.sh', {
      requestTimeoutMs: 300,
      onNotification: (m, p) => {
        logs.push([m, p]);
        closed();
      },
    });
    await stdinClosed; // the server says so after closing fd 0
    const results: string[] = [];
    for (let i = 0; i < 3; i++)
      results.push(
        await c.request('tool/call', { name: 'x' }).then(
          () => 'answered',
          (e: YepRequestError) => e.kind,
        ),
      );
    expect(results.every((k) => k === 'timeout' || k === 'exited')).toBe(true);
    expect(logs).toEqual([['log', { level: 'info', message: 'stdin closed' }]]);
    expect(c.notes.map((n) => n.text).join()).toMatch(/stdin closed by the server \(EPIPE\)|not delivered/);
    expect(c.running).toBe(true);
  });

  it('reports a command that cannot start without an unhandled error', async () => {
    const c = YepClient.start({ command: join(work, 'nope'), packageDir: work, workspaceRoot: work });
    expect(await c.spawned).toBe(false);
    expect((await c.exited).spawnError?.code).toBe('ENOENT');
    expect((await c.stop()).endedBy).toBe('never-started');
    // argv or env with a NUL byte makes spawn throw synchronously: still just "could not start".
    const nul = YepClient.start({ command: process.execPath, args: ['a\u0000b'], packageDir: work, workspaceRoot: work });
    expect(await nul.spawned).toBe(false);
    expect((await nul.exited).spawnError?.code).toBe('ERR_INVALID_ARG_VALUE');
  });

  it('stops gracefully: shutdown is answered and the server exits', async () => {
    const c = start('multi.sh');
    await c.initialize();
    const r = await c.stop({ graceMs: 1000 });
    expect(r).toMatchObject({ shutdown: 'answered', endedBy: 'shutdown', leftovers: [], groupGone: true });
    expect(r.exit?.code).toBe(0);
  });

  it('kills the process group when its abort signal fires (Ctrl-C forwarding)', async () => {
    const ac = new AbortController();
    const c = start('multi.sh', { signal: ac.signal });
    await c.initialize();
    const call = c.callTool('hang', {});
    ac.abort();
    expect(((await call.result.catch((e: unknown) => e)) as YepRequestError).kind).toBe('aborted');
    expect((await c.exited).signal).toBe('SIGKILL');
  });
});
