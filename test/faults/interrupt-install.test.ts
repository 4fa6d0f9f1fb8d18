/**
 * Ctrl-C during `install a b`, through the built CLI (the process boundary is the subject):
 * SIGINT is sent at a deterministic point (a checkpoint that pauses, then lets the run go
 * on once the signal was sent, so the run meets the interruption exactly there, with only
 * its own signal handlers, as in production).
 * Expected: exit 130 (E_INTERRUPTED), never 11; nothing in flight is committed (the lock,
 * settings and store byte-identical for the sources not committed yet), staging empty, and
 * no process the run started (git and its transport helper, here) left running. A source
 * committed before the Ctrl-C stays, as npm and cargo keep what they finished.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshot, stagingLeft } from '../helpers/faults.js';
import { startGitHttpServer, type GitHttpServer } from '../helpers/git-http-server.js';
import { fixtureFiles, makeRepo } from '../helpers/git-repo.js';
import { BIN, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { waitNoneWithEnv } from '../helpers/proc.js';
import { withSeams } from '../helpers/seams.mjs';

let git: GitHttpServer;
let src: TempHome;
const homes: TempHome[] = [];

beforeAll(async () => {
  src = makeTempHome('yep-sigint-src-');
  const repos = join(src.root, 'repos');
  makeRepo(repos).commit(fixtureFiles('gitext', '1.0.0'), 'v1');
  // A git host that answers nothing for a minute: git (and its helper) are running when Ctrl-C comes.
  git = await startGitHttpServer({ root: repos, delayMs: 60_000 });
  for (const name of ['alpha', 'beta', 'kept']) writePackage(join(src.root, name), { name });
});
afterAll(async () => {
  await git?.close();
  for (const h of homes) h.cleanup();
  src?.cleanup();
});

/** A home with `kept` installed and enabled: a lock and a settings file to stay byte-identical. */
async function home(): Promise<TempHome> {
  const h = makeTempHome('yep-sigint-');
  homes.push(h);
  for (const args of [
    ['install', join(src.root, 'kept')],
    ['enable', 'kept'],
  ]) {
    const r = await runCli(args, { env: h.env });
    expect(r.code, r.stderr).toBe(0);
  }
  return h;
}

interface Interrupted {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Run `yep-ext args`, wait until it pauses at `point` and `ready()` holds, send SIGINT to
 * the CLI process alone (as a parent forwarding Ctrl-C does; a terminal signals the whole
 * group, which is easier: its children get it too), and collect its exit.
 */
async function interruptAt(h: TempHome, point: string, args: string[], ready: () => boolean = () => true): Promise<Interrupted> {
  const pauseFile = join(h.root, `paused-${point.replace(/\W/g, '_')}`);
  const resumeFile = `${pauseFile}.resume`;
  rmSync(pauseFile, { force: true });
  rmSync(resumeFile, { force: true });
  const child = spawn(process.execPath, [BIN, ...args], {
    env: withSeams({ ...h.env, YEP_EXT_TEST_PAUSE_AT: point, YEP_EXT_TEST_PAUSE_FILE: pauseFile, YEP_EXT_TEST_PAUSE_RESUME: resumeFile }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let exited = false;
  void exit.then(() => (exited = true));
  const started = Date.now();
  while (!(existsSync(pauseFile) && ready())) {
    if (exited) throw new Error(`yep-ext ${args.join(' ')} exited before reaching ${point}:\n${stderr}`);
    if (Date.now() - started > 30_000) {
      child.kill('SIGKILL');
      throw new Error(`yep-ext ${args.join(' ')} never reached ${point}:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  child.kill('SIGINT');
  // The run meets the Ctrl-C where it paused: let it go on once the signal has been handled.
  await new Promise((r) => setTimeout(r, 200));
  writeFileSync(resumeFile, '');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const { code, signal } = await exit;
  clearTimeout(timer);
  return { code, signal, stdout, stderr };
}

const lockOf = (h: TempHome): string => readFileSync(join(h.configDir, 'extensions', 'extensions.lock'), 'utf8');
const storeNames = (h: TempHome): string[] =>
  readdirSync(join(h.configDir, 'extensions'))
    .filter((n) => !n.startsWith('.') && n !== 'extensions.lock')
    .sort();

describe('Ctrl-C during install a b', () => {
  it('stops both: the path source staged and waiting, the git source mid-fetch; exit 130, nothing changed, no git left', async () => {
    const h = await home();
    const before = snapshot(h);
    const requestsBefore = git.requests.length;
    const r = await interruptAt(
      h,
      'install:after-fetch',
      ['install', join(src.root, 'alpha'), git.url('gitext.git'), '--yes'],
      // git is talking to the host (its helper is blocked on the answer) when Ctrl-C comes.
      () => git.requests.length > requestsBefore,
    );
    expect(r.signal, r.stderr).toBeNull();
    expect(r.code, r.stdout + r.stderr).toBe(130);
    expect(r.stderr).toMatch(/Interrupted/);
    // The lock, settings, secrets, grants and store as before: alpha, fetched and planned, was not placed.
    expect(snapshot(h)).toEqual(before);
    expect(storeNames(h)).toEqual(['kept']);
    expect(stagingLeft(h)).toEqual([]);
    // Nothing the run started is still running (git, git-remote-http), whoever its parent is now.
    expect(await waitNoneWithEnv(`HOME=${h.env.HOME}`)).toEqual([]);
  });

  it('keeps a source committed before Ctrl-C, stops the other before its commit; exit 130 naming both', async () => {
    const h = await home();
    const before = lockOf(h);
    // The first source to commit pauses right after its lock write (holding the installer lock): the other cannot commit yet.
    const r = await interruptAt(h, 'place:after-lock', ['install', join(src.root, 'alpha'), join(src.root, 'beta'), '--yes', '--json']);
    expect(r.code, `${r.signal} ${r.stdout} ${r.stderr}`).toBe(130);
    const err = JSON.parse(r.stdout).error;
    expect(err.code).toBe('E_INTERRUPTED');
    const kept: string[] = err.details.installed;
    expect(kept).toHaveLength(1);
    const [done] = kept as [string];
    const other = done === 'alpha' ? 'beta' : 'alpha';
    expect(err.details.interrupted).toEqual([join(src.root, other)]);
    // Exactly the committed one was added: in the store and the lock; the other in neither.
    expect(storeNames(h)).toEqual([done, 'kept'].sort());
    const lock = lockOf(h);
    expect(lock).toContain(`name = "${done}"`);
    expect(lock).not.toContain(`name = "${other}"`);
    expect(lock).not.toEqual(before);
    expect(stagingLeft(h)).toEqual([]);
    expect(await waitNoneWithEnv(`HOME=${h.env.HOME}`)).toEqual([]);
    // The next run finishes the job.
    const again = await runCli(['install', join(src.root, other), '--yes'], { env: h.env });
    expect(again.code, again.stderr).toBe(0);
  });
});
