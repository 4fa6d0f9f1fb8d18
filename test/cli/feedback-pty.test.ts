/**
 * Feedback on waits (docs/feedback.md), in a real pseudo-terminal: a slow
 * download shows bytes and a rate, a stalled index shows its deadline and each
 * retry with a countdown, a slow git host shows the clone, a server slow to
 * answer shows doctor's spawn wait; none of it reaches a
 * stderr that is not a terminal, and --quiet silences it. Needs `npm run build`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatBytes } from '../../src/cli/status-area.js';
import { fixtureCrate } from '../helpers/crates.js';
import { makePackage } from '../helpers/ext-package.js';
import { startGitHttpServer, type GitHttpServer } from '../helpers/git-http-server.js';
import { fixtureFiles, makeRepo } from '../helpers/git-repo.js';
import { makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { describeNeeding, need } from '../helpers/needs.js';
import { closedAfterFile } from '../helpers/per-test-fixtures.js';
import { HAS_SCRIPT, runCliInPty } from '../helpers/pty.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';
const HTTP = {
  YEP_EXT_HTTP_TIMEOUT_MS: '8000',
  YEP_EXT_HTTP_DOWNLOAD_TIMEOUT_MS: '8000',
  YEP_EXT_HTTP_STALL_MS: '1200',
  YEP_EXT_HTTP_MIN_RATE: '1',
  YEP_EXT_HTTP_RETRIES: '2',
  YEP_EXT_HTTP_RETRY_BASE_MS: '1200',
  YEP_EXT_HTTP_RETRY_MAX_MS: '1200',
};
const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;

const crate = fixtureCrate(HELLO, '0.1.0');

/**
 * Each test has its own registry (its faults are its own) and its own home, so the tests
 * run at once: they mostly wait (a drip, a stall, a slow git host, a silent server), and
 * waits side by side cost the longest of them, not their sum.
 */
interface Setup {
  reg: TestRegistry;
  home: TempHome;
  env(extra?: Record<string, string>): Record<string, string>;
  /** The download drips in ~20 pieces over ~2 s. */
  slowDownload(): void;
  installed(): boolean;
}
const opened = closedAfterFile<Setup>();
async function setup(): Promise<Setup> {
  const reg = await startRegistry();
  reg.publish({ name: HELLO, vers: '0.1.0', data: crate });
  const home = makeTempHome('yep-feedback-');
  const s: Setup = {
    reg,
    home,
    env: (extra = {}) => ({ ...home.env, ...HTTP, YEP_EXT_INDEX: reg.indexUrl, ...extra }),
    slowDownload: () => reg.fault('/crates/', { kind: 'slow-drip', intervalMs: 100, chunk: Math.ceil(crate.length / 20) }),
    installed: () => existsSync(join(home.configDir, 'extensions', 'hello', 'plugin.json')),
  };
  return opened(s);
}

// One concurrent suite around both, so the terminal and the non-terminal tests run together too.
describe.concurrent('feedback on waits', () => {
  describeNeeding(need(HAS_SCRIPT, '`script` from util-linux (Debian package bsdutils)'), 'feedback in a terminal', () => {
    it.concurrent('a slow download shows its bytes, total and rate as they arrive', async () => {
      const { env, slowDownload, installed } = await setup();
      slowDownload();
      const r = await runCliInPty(['install', 'hello', '--yes'], { env: env(), cols: 160 });
      expect(r.code, r.output).toBe(0);
      expect(installed()).toBe(true);
      expect(r.output).toMatch(SPINNER);
      const total = formatBytes(crate.length).replace('.', '\\.');
      expect(r.output).toMatch(new RegExp(`Downloading ${HELLO} 0\\.1\\.0  \\d+ B / ${total}  \\d+ B/s  ETA \\d+s \\(\\d+s, gives up in \\d+s\\)`));
    });

    it.concurrent('a stalled index shows the deadline, then each retry with why and a countdown', async () => {
      const { reg, env, installed } = await setup();
      reg.fault(`/index/yo/lo/${HELLO}`, { kind: 'hang' }, 1);
      const r = await runCliInPty(['install', 'hello', '--yes'], { env: env(), cols: 160 });
      expect(r.code, r.output).toBe(0);
      expect(installed()).toBe(true);
      // The countdown is the request's total (--timeout, 2m by default), not one attempt's stall.
      expect(r.output).toMatch(/gives up in (1m \d+s|2m 00s)/);
      expect(r.output).toMatch(/↻ [^\n]*attempt 2\/3 in \d/);
      expect(r.output).toMatch(/next attempt in \d+s/);
    });

    it.concurrent('a stalled index counts down to the total (--timeout), not to one attempt, across the retry', async () => {
      const { reg, env, installed } = await setup();
      reg.fault(`/index/yo/lo/${HELLO}`, { kind: 'hang' }, 1);
      const r = await runCliInPty(['install', 'hello', '--yes', '--timeout', '45s'], { env: env(), cols: 160 });
      expect(r.code, r.output).toBe(0);
      expect(installed()).toBe(true);
      const left = [...r.output.matchAll(/Waiting for [^\n]*?gives up in (\d+)s/g)].map((m) => Number(m[1]));
      expect(left.length, r.output).toBeGreaterThan(0);
      // The stall of one attempt is a second or two; the countdown is the total's.
      for (const s of left) expect(s).toBeGreaterThanOrEqual(40);
    });

    it.concurrent('a slow git host shows the resolving and the clone', async () => {
      const { home, env } = await setup();
      const repo = makeRepo(join(home.root, 'repos'));
      repo.commit(fixtureFiles('gitext', '1.0.0'), 'v1');
      let server: GitHttpServer | undefined;
      try {
        server = await startGitHttpServer({ root: join(home.root, 'repos'), delayMs: 700 });
        const r = await runCliInPty(['install', server.url('gitext.git'), '--yes'], { env: env(), cols: 200 });
        expect(r.code, r.output).toBe(0);
        expect(existsSync(join(home.configDir, 'extensions', 'gitext', 'plugin.json'))).toBe(true);
        expect(r.output).toMatch(/Resolving the default branch on http:\/\/127\.0\.0\.1:\d+\/gitext\.git \(\d+s, gives up in/);
        expect(r.output).toMatch(/Cloning http:\/\/127\.0\.0\.1:\d+\/gitext\.git at [0-9a-f]{12} \(\d+s, gives up in/);
      } finally {
        await server?.close();
      }
    });

    it.concurrent('a server slow to answer: doctor shows the spawn wait with its pid and deadline', async () => {
      const { home, env } = await setup();
      const dir = makePackage(home.root, 'mute', { server: 'silent.sh' });
      const r = await runCliInPty(['doctor', dir, '--timeout', '2'], { env: env(), cols: 160 });
      expect(r.code, r.output).toBe(9);
      expect(r.output).toMatch(SPINNER);
      expect(r.output).toMatch(/Waiting for the server \(pid \d+\) to answer initialize \(\d+s, gives up in \d+s\)/);
    });

    it.concurrent('--quiet draws nothing while it waits', async () => {
      const { env, slowDownload, installed } = await setup();
      slowDownload();
      const r = await runCliInPty(['install', 'hello', '--yes', '--quiet'], { env: env(), cols: 160 });
      expect(r.code, r.output).toBe(0);
      expect(installed()).toBe(true);
      expect(r.output).not.toMatch(SPINNER);
      expect(r.output).not.toMatch(/Downloading/);
    });
  });

  describe('feedback without a terminal', () => {
    it.concurrent('a slow download and a stalled index leave stderr without progress', async () => {
      const { reg, env, slowDownload, installed } = await setup();
      slowDownload();
      reg.fault(`/index/yo/lo/${HELLO}`, { kind: 'hang' }, 1);
      const r = await runCli(['install', 'hello', '--yes'], { env: env() });
      expect(r.code, r.stderr).toBe(0);
      expect(installed()).toBe(true);
      expect(r.stderr).not.toMatch(SPINNER);
      expect(r.stderr).not.toMatch(/\u001b\[|\r|Downloading|attempt 2\/3|gives up/);
    });

    it.concurrent('--verbose gives a CI log one line per step and per retry', async () => {
      const { reg, env } = await setup();
      reg.fault(`/index/yo/lo/${HELLO}`, { kind: 'hang' }, 1);
      const r = await runCli(['install', 'hello', '--yes', '--verbose'], { env: env() });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(/\u001b\[|\r/);
      expect(r.stderr).toMatch(/^Downloading [^\n]*…$/m);
      expect(r.stderr).toMatch(/^Downloading [^\n]*: done \([\d.]+ (B|KiB) in \d+s\)$/m);
      expect(r.stderr).toMatch(/^ {2}retry: [^\n]*attempt 2\/3 in /m);
      expect(r.stderr).toMatch(/^GET http:\/\/127\.0\.0\.1:\d+\/index\//m);
    });
  });
});
