/**
 * `--timeout`, the total a network command waits on a server that does not answer,
 * through the built CLI against a loopback registry that stalls and a git host that
 * does not answer: the command gives up at the total (not after every attempt's own
 * stall and backoff), and says the total; a bad value is a usage error of every
 * network command before anything is sent. The countdown on a terminal is
 * test/cli/feedback-pty.test.ts; the total on an injected clock, at its 2 min default,
 * test/integration/injected-clock.test.ts.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer, type GitHttpServer } from '../helpers/git-http-server.js';
import { fixtureFiles, makeRepo } from '../helpers/git-repo.js';
import { fixtureCrate } from '../helpers/crates.js';
import { jsonOf, makeTempHome, runCli, runCliProcess, type TempHome } from '../helpers/home.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';
let reg: TestRegistry;
let git: GitHttpServer;
let h: TempHome;

beforeAll(async () => {
  reg = await startRegistry();
  reg.publish({ name: HELLO, vers: '0.1.0', data: fixtureCrate(HELLO, '0.1.0') });
  h = makeTempHome('yep-timeout-');
  const repos = join(h.root, 'repos');
  makeRepo(repos).commit(fixtureFiles('gitext', '1.0.0'), 'v1');
  // Answers nothing for a minute: a host that stalls.
  git = await startGitHttpServer({ root: repos, delayMs: 60_000 });
});
afterAll(async () => {
  await reg?.close();
  await git?.close();
  h?.cleanup();
});

/** Attempts stall after 1 s and there are six of them: ~7 s with backoff, if nothing else ended the wait. */
const SLOW = { YEP_EXT_HTTP_STALL_MS: '1000', YEP_EXT_HTTP_RETRIES: '5', YEP_EXT_TEST_HTTP_RETRY_BASE_MS: '200', YEP_EXT_TEST_HTTP_RETRY_MAX_MS: '400' };

describe('--timeout is the total a command waits', () => {
  it('a stalled registry: install gives up at the total and says it, not after every attempt', async () => {
    reg.clearFaults();
    reg.requests.length = 0;
    reg.fault(`/index/yo/lo/${HELLO}`, { kind: 'hang' });
    const started = Date.now();
    const r = await runCliProcess(['install', 'hello', '--timeout', '2500ms', '--json'], { env: { ...h.env, ...SLOW, YEP_EXT_INDEX: reg.indexUrl } });
    const took = Date.now() - started;
    expect(r.code, r.stdout + r.stderr).toBe(6);
    const err = jsonOf(r).error;
    expect(err.code).toBe('E_NETWORK');
    expect(err.message).toMatch(/no answer within 2\.5s \(\d attempts?(, the last: the server sent no answer in time)?\); gave up\./);
    expect(err.details.timeout_ms).toBe(2500);
    expect(err.hint).toMatch(/--timeout/);
    // The total, not six stalls: fewer attempts than the retries allow, and well under their ~7 s.
    expect(reg.requestsTo(`/index/yo/lo/${HELLO}`).length).toBeLessThan(6);
    expect(took).toBeGreaterThanOrEqual(2500);
    expect(took).toBeLessThan(6000);
    reg.clearFaults();
  });

  it('a git host that does not answer: the same total bounds git', async () => {
    const started = Date.now();
    const r = await runCli(['install', git.url('gitext.git'), '--timeout', '2s', '--json'], { env: h.env });
    const took = Date.now() - started;
    expect(r.code, r.stdout + r.stderr).toBe(6);
    expect(jsonOf(r).error.message).toMatch(/git timed out after 2s without progress/);
    expect(jsonOf(r).error.hint).toMatch(/--timeout/);
    expect(took).toBeLessThan(8000);
  });

  const NETWORK_COMMANDS: string[][] = [
    ['install', 'hello'],
    ['update', '--all'],
    ['outdated'],
    ['info', 'hello'],
    ['search', 'hello'],
    ['mirror', join('mirror-out')],
  ];
  const BAD = ['abc', '0', '-5s', '25h', '2 minutes', ''];
  it.each(NETWORK_COMMANDS.map((args, i) => [args[0]!, args, BAD[i % BAD.length]!] as const))(
    '%s takes --timeout; a bad value is a usage error before anything is sent',
    async (_cmd, args, bad) => {
      reg.requests.length = 0;
      const env = { ...h.env, YEP_EXT_INDEX: reg.indexUrl };
      const help = await runCli([args[0]!, '--help'], { env });
      expect(help.stdout).toMatch(/--timeout=<duration>/);
      const r = await runCli([...args, '--timeout', bad, '--json'], { env, cwd: h.root });
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(jsonOf(r).error.code).toBe('E_USAGE');
      expect(reg.requests).toEqual([]);
    },
  );
});
