/**
 * Test seams for the CLI, described by YEP_EXT_TEST_* variables that only test
 * code reads (production code reads none of them).
 *
 * A test that runs the built CLI puts the variables in the child's environment
 * and passes the env through withSeams(), which adds
 * NODE_OPTIONS=--require=test/helpers/seams-preload.cjs when any is set; the
 * preload turns them into seams on globalThis[Symbol.for('yep-ext.test-seams')],
 * which processIo() hands to the run (src/cli/test-seams.ts). In-process tests get
 * the same seams from seamsFromEnv() (./in-process.ts as the run's io.testSeams;
 * home.ts's ctx() for a Context, through ./seams.mjs).
 *
 * CommonJS, and the preload loaded with --require, not --import: an ES module
 * preload starts Node's ESM loader in every child (CPU on every spawn on Node 20),
 * and the suite spawns thousands.
 *
 *   YEP_EXT_TEST_PAUSE_AT=<point>     stop at checkpoint(ctx, <point>) forever (a crash test kills it)
 *   YEP_EXT_TEST_PAUSE_FILE=<file>    ... after writing the pid there
 *   YEP_EXT_TEST_PAUSE_RESUME=<file>  ... until that file exists, then go on (a Ctrl-C test signals, then resumes)
 *   YEP_EXT_TEST_EARLY_SERVER_MARK=<f> doctor's early start appends the pids it spawned there
 *   YEP_EXT_TEST_RESOLVE=n=a[,n=a]    answer these host names without DNS (like curl --resolve)
 *   YEP_EXT_TEST_KEYCHAIN_MODULE=<f>  load this module instead of @napi-rs/keyring
 *   YEP_EXT_TEST_LOCK_WAIT_MS=<ms>    wait this long for another process holding the installer lock
 *   YEP_EXT_TEST_AGENT_TIMEOUT_MS=<ms> give `yolop --version` this long
 *   YEP_EXT_TEST_DOCTOR_GRACE_MS=<ms> doctor's grace for each step of a server's stop
 *   YEP_EXT_TEST_HTTP_RATE_WINDOW_MS, _RETRY_BASE_MS, _RETRY_MAX_MS, _RETRY_AFTER_MAX_MS,
 *   _MAX_REDIRECTS                    HTTP limits that are not user-facing variables
 */
'use strict';
const { appendFileSync, existsSync, writeFileSync } = require('node:fs');
const { isIP } = require('node:net');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');

const PRELOAD = join(__dirname, 'seams-preload.cjs');

const HTTP_KEYS = {
  rateWindowMs: 'YEP_EXT_TEST_HTTP_RATE_WINDOW_MS',
  retryBaseMs: 'YEP_EXT_TEST_HTTP_RETRY_BASE_MS',
  retryMaxMs: 'YEP_EXT_TEST_HTTP_RETRY_MAX_MS',
  retryAfterMaxMs: 'YEP_EXT_TEST_HTTP_RETRY_AFTER_MAX_MS',
  maxRedirects: 'YEP_EXT_TEST_HTTP_MAX_REDIRECTS',
};

/** `name=address,…` -> Map(lower-case name -> address); malformed pairs are ignored. */
function parseResolve(text) {
  const out = new Map();
  for (const pair of (text ?? '').split(',')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    const name = pair.slice(0, eq).trim().toLowerCase();
    const address = pair.slice(eq + 1).trim();
    if (name !== '' && isIP(address) !== 0) out.set(name, address);
  }
  return out;
}

/** The seams the YEP_EXT_TEST_* variables in `env` describe (an object shaped like src/cli/test-seams.ts's TestSeams). */
function seamsFromEnv(env) {
  const seams = {};
  const pauseAt = env.YEP_EXT_TEST_PAUSE_AT;
  if (pauseAt) {
    const pauseFile = env.YEP_EXT_TEST_PAUSE_FILE;
    const resumeOn = env.YEP_EXT_TEST_PAUSE_RESUME;
    seams.checkpoint = async (point) => {
      if (point !== pauseAt) return;
      if (pauseFile) writeFileSync(pauseFile, `${process.pid}\n`);
      if (resumeOn) {
        // Polled, not a signal listener of its own: the run's handlers are what a Ctrl-C meets.
        await new Promise((resolve) => {
          const poll = setInterval(() => {
            if (existsSync(resumeOn)) {
              clearInterval(poll);
              resolve(undefined);
            }
          }, 20);
        });
        return;
      }
      await new Promise(() => {
        setInterval(() => {}, 1 << 30);
      });
    };
  }
  // The pids doctor's early start spawned (src/cli/doctor-early.ts), one line per start.
  const early = env.YEP_EXT_TEST_EARLY_SERVER_MARK;
  if (early) seams.earlyServer = (pids) => appendFileSync(early, `${pids.join(' ')}\n`);
  const http = {};
  if (env.YEP_EXT_TEST_RESOLVE) http.resolve = parseResolve(env.YEP_EXT_TEST_RESOLVE);
  const limits = {};
  for (const [key, name] of Object.entries(HTTP_KEYS)) {
    const raw = env[name];
    if (raw !== undefined && raw.trim() !== '' && Number.isFinite(Number(raw))) limits[key] = Number(raw);
  }
  if (Object.keys(limits).length > 0) http.limits = limits;
  if (Object.keys(http).length > 0) seams.http = http;
  const waits = {};
  for (const [key, name] of [
    ['lockMs', 'YEP_EXT_TEST_LOCK_WAIT_MS'],
    ['agentVersionMs', 'YEP_EXT_TEST_AGENT_TIMEOUT_MS'],
    ['doctorGraceMs', 'YEP_EXT_TEST_DOCTOR_GRACE_MS'],
  ]) {
    const n = Number(env[name]);
    if (env[name] !== undefined && Number.isFinite(n) && n > 0) waits[key] = n;
  }
  if (Object.keys(waits).length > 0) seams.waits = waits;
  const keyring = env.YEP_EXT_TEST_KEYCHAIN_MODULE;
  // A module exporting keyringFor gets the run's environment (test/fixtures/fake-keyring.mjs).
  if (keyring)
    seams.keychain = {
      load: async () => {
        const mod = await import(pathToFileURL(keyring).href);
        return typeof mod.keyringFor === 'function' ? mod.keyringFor(env) : mod;
      },
    };
  return seams;
}

/** `env` plus NODE_OPTIONS loading the preload, when it sets any YEP_EXT_TEST_* variable. */
function withSeams(env) {
  if (!Object.keys(env).some((k) => k.startsWith('YEP_EXT_TEST_') && env[k] !== undefined)) return env;
  const prior = env.NODE_OPTIONS ? `${env.NODE_OPTIONS} ` : '';
  // Quoted as NODE_OPTIONS reads it (a checkout path may hold spaces).
  return { ...env, NODE_OPTIONS: `${prior}--require=${JSON.stringify(PRELOAD)}` };
}

module.exports = { PRELOAD, parseResolve, seamsFromEnv, withSeams };
