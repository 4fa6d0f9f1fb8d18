/**
 * One "is the tree intact" rule (verify.ts `needsRefetch`): for each kind of
 * damage to an installed crate, the three commands that judge it agree:
 * `list` names the problem in its row (no stderr note: list's stderr stays empty), `install --frozen` fetches it again,
 * and a plain `install <same spec>` reinstalls it (status 'reinstalled', not
 * "already installed"). After each repair the disk is exactly the locked tree:
 * every file's bytes and exec bit as right after the install, the content hash
 * recomputed here (the host's algorithm, written independently of src/) equal
 * to the lock's, the provisioned binary's sha256 equal to `binary_file_sha256`.
 * Each test starts from a copy of a home where `install binny` was made once in this process
 * (test/helpers/setup-install.ts: the core call `yep-ext install --yes` makes, not a CLI
 * process), copied with prepared-home.ts copyHome, which records the copy's tree signatures as the
 * product records a tree it placed: the install is the set-up here, the judges after it are
 * the subject (what the install itself records: test/cli/verify-repair.test.ts).
 */
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, existsSync, lstatSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { hostTarget } from '../../src/core/binary/provision-binary.js';
import { parseLock } from '../../src/core/store/lockfile.js';
import { treeStateFile } from '../../src/core/store/tree-state.js';
import { BINNY_OTHER, BINNY_SERVER, binnyInstalledOnce } from '../helpers/binny.js';
import { copyHome } from '../helpers/prepared-home.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { describeNeeding, need } from '../helpers/needs.js';
import type { TestRegistry } from '../helpers/registry.js';

let reg: TestRegistry;
let home: TempHome;
const OTHER = BINNY_OTHER;
const SERVER = BINNY_SERVER;
const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const store = () => join(home.configDir, 'extensions');
const pkg = () => join(store(), 'binny');
const lockText = () => readFileSync(join(store(), 'extensions.lock'), 'utf8');
const envOf = (h: TempHome) => ({ ...h.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0' });
const env = () => envOf(home);

/** Every regular file under `dir` (no .git), relative with `/`, sorted by UTF-8 bytes. */
function files(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(dir, rel))) {
    const r = rel ? `${rel}/${name}` : name;
    const st = lstatSync(join(dir, r));
    if (st.isDirectory()) {
      if (name !== '.git') out.push(...files(dir, r));
    } else if (st.isFile()) out.push(r);
  }
  return out.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

/** host-compat §4: SHA-256 over `path 0x00 len(u64 LE) content` per file; the provisioned binary left out. */
function hostHash(dir: string): string {
  const h = createHash('sha256');
  for (const rel of files(dir)) {
    if (rel === SERVER) continue;
    const bytes = readFileSync(join(dir, rel));
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(bytes.length));
    h.update(Buffer.from(rel))
      .update(Buffer.from([0]))
      .update(len)
      .update(bytes);
  }
  return `sha256:${h.digest('hex')}`;
}

/** Each file's digest and exec bit, as the host would start and read them. */
function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(files(dir).map((rel) => [rel, `${sha(readFileSync(join(dir, rel)))} ${lstatSync(join(dir, rel)).mode & 0o111 ? 'x' : '-'}`]));
}

/** The home `install binny` was made in, once: every test starts from a copy of it. */
let installed: TempHome;
beforeAll(async () => {
  ({ reg, installed } = await binnyInstalledOnce());
});
afterAll(() => {
  installed.cleanup();
  reg.close();
});
beforeEach(() => {
  home = makeTempHome();
  copyHome(installed, home);
});
afterEach(() => home.cleanup());

const damage: Array<[string, () => void]> = [
  ['a file changed', () => appendFileSync(join(pkg(), 'README.md'), 'edited\n')],
  ['a file added', () => writeFileSync(join(pkg(), 'added.txt'), 'x\n')],
  ['a file removed', () => rmSync(join(pkg(), 'src', 'lib.txt'))],
  ['the server chmod -x', () => chmodSync(join(pkg(), SERVER), 0o644)],
  ['the binary swapped', () => writeFileSync(join(pkg(), SERVER), OTHER)],
  ['the tree missing', () => rmSync(realpathSync(pkg()), { recursive: true, force: true })],
];

describeNeeding(
  need(hostTarget() !== undefined, `a platform with a prebuilt-binary target (this is ${process.platform}-${process.arch})`),
  'one intact rule for list, install --frozen and install',
  () => {
    it.each(damage)('%s: list names it, --frozen repairs it, a plain install reinstalls it; the disk is the locked tree after each', async (_what, breakIt) => {
      const lockBefore = lockText();
      const locked = parseLock(lockBefore, 'extensions.lock').entries[0]!;
      const pristine = snapshot(pkg());
      const expectLockedTree = (): void => {
        expect(lockText()).toBe(lockBefore);
        expect(snapshot(pkg())).toEqual(pristine);
        expect(hostHash(pkg())).toBe(locked.content_hash);
        expect(sha(readFileSync(join(pkg(), SERVER)))).toBe(locked.source.binary_file_sha256);
      };
      expectLockedTree();
      // What list says of the intact install (the weak-digest note of a release-host binary, nothing else).
      const intact = await runCli(['list', '--json'], { env: env() });
      const baseline: string[] = jsonOf(intact).extensions[0].problems;
      expect(baseline.every((p) => p.startsWith('weak binary digest'))).toBe(true);
      expect(intact.stderr).not.toContain('not as the lock pins');

      for (const repair of [
        ['install', '--frozen', '--json'],
        ['install', 'binny', '--json'],
      ]) {
        breakIt();
        const list = await runCli(['list', '--json'], { env: env() });
        expect(list.code, list.stderr).toBe(0);
        expect(
          jsonOf(list).extensions[0].problems.filter((p: string) => !baseline.includes(p)),
          list.stdout,
        ).not.toEqual([]);

        const r = await runCli(repair, { env: env() });
        expect(r.code, r.stderr + r.stdout).toBe(0);
        if (repair[1] === '--frozen')
          expect(jsonOf(r)).toEqual({
            frozen: [{ name: 'binny', status: 'installed', reason: null, engines: expect.objectContaining({ status: 'none' }) }],
            enabled: null,
          });
        else expect(jsonOf(r).installed.map((o: { status: string }) => o.status)).toEqual(['reinstalled']);
        expectLockedTree();

        const after = await runCli(['list', '--json'], { env: env() });
        expect(jsonOf(after).extensions[0].problems).toEqual(baseline);
        expect(after.stderr).not.toContain('not as the lock pins');
      }
    });
  },
);

/**
 * The same rule seen from the three read-side judges: for each change, `list`
 * names a problem beyond the intact baseline, `verify` exits 5 (E_INTEGRITY)
 * and `install --frozen` fetches the entry again exactly when the change is
 * damage; a lost stat signature is not damage (a re-hash finds the tree
 * intact), so all three leave it alone. After a frozen repair the tree is the
 * locked one and all three agree it is intact.
 */
const table: Array<[string, boolean, () => void]> = [
  ['a file modified', true, () => writeFileSync(join(pkg(), 'README.md'), 'HELLO\n')],
  ['a file missing', true, () => rmSync(join(pkg(), 'README.md'))],
  ['an extra file', true, () => writeFileSync(join(pkg(), 'src', 'extra.txt'), 'x\n')],
  ['the server chmod -x', true, () => chmodSync(join(pkg(), SERVER), 0o644)],
  ['the server binary gone', true, () => rmSync(join(pkg(), SERVER))],
  ['the signature file missing', false, () => rmSync(treeStateFile({ storeDir: store(), stateDir: join(store(), '.yep-state') } as never, 'binny'))],
  [
    'the signature file missing and a file modified',
    true,
    () => {
      rmSync(treeStateFile({ storeDir: store(), stateDir: join(store(), '.yep-state') } as never, 'binny'));
      appendFileSync(join(pkg(), 'src', 'lib.txt'), 'more\n');
    },
  ],
];

describeNeeding(
  need(hostTarget() !== undefined, `a platform with a prebuilt-binary target (this is ${process.platform}-${process.arch})`),
  'list, verify and install --frozen judge a tree alike',
  () => {
    it.each(table)('%s (damage: %s)', async (_what, damaged, change) => {
      const lockBefore = lockText();
      const locked = parseLock(lockBefore, 'extensions.lock').entries[0]!;
      const pristine = snapshot(pkg());
      const baseline: string[] = jsonOf(await runCli(['list', '--json'], { env: env() })).extensions[0].problems;
      expect(existsSync(treeStateFile({ storeDir: store(), stateDir: join(store(), '.yep-state') } as never, 'binny'))).toBe(true);
      change();
      const before = snapshot(pkg());

      const verdicts = async () => {
        const list = await runCli(['list', '--json'], { env: env() });
        expect(list.code, list.stderr).toBe(0);
        const listed = jsonOf(list).extensions[0].problems.filter((p: string) => !baseline.includes(p)).length > 0;
        const verify = await runCli(['verify', '--json'], { env: env() });
        expect([0, 5], verify.stderr + verify.stdout).toContain(verify.code);
        if (verify.code === 5) expect(jsonOf(verify).error.code).toBe('E_INTEGRITY');
        return { listed, verifyFails: verify.code === 5 };
      };
      // Read-only judges first: they leave the tree as it is (bytes and modes).
      expect(await verdicts()).toEqual({ listed: damaged, verifyFails: damaged });
      expect(snapshot(pkg())).toEqual(before);

      const frozen = await runCli(['install', '--frozen', '--json'], { env: env() });
      expect(frozen.code, frozen.stderr + frozen.stdout).toBe(0);
      expect(jsonOf(frozen).frozen.map((f: { name: string; status: string }) => ({ name: f.name, status: f.status }))).toEqual([
        { name: 'binny', status: damaged ? 'installed' : 'skipped' },
      ]);
      expect(lockText()).toBe(lockBefore);
      expect(snapshot(pkg())).toEqual(pristine);
      expect(hostHash(pkg())).toBe(locked.content_hash);
      expect(await verdicts()).toEqual({ listed: false, verifyFails: false });
    });
  },
);
