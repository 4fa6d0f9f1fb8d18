/**
 * `update` over lock entries the host wrote (no
 * `grant` key), unknown entry keys surviving every rewrite, and `install
 * --frozen` strict about the lockfile it is given. State is checked on disk.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { grantFingerprint, grantOf } from '../../src/core/package/grants.js';
import { parseManifest } from '../../src/core/package/manifest-validate.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { fakeAgent } from '../helpers/fake-agent.js';

/** Every path under `dir` (sorted), with a file's bytes: what a command must leave as it was. */
function treeOf(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((e) => join(e.parentPath, e.name))
    .sort()
    .map((p) => {
      try {
        return `${p}\n${readFileSync(p, 'base64')}`;
      } catch {
        return p; // a directory or a link to one
      }
    });
}

let home: TempHome;
let pkg: string;
const store = () => join(home.configDir, 'extensions');
const lockFile = () => join(store(), 'extensions.lock');
const lockText = () => readFileSync(lockFile(), 'utf8');
const setManifest = (yolop: Record<string, unknown>, version = '0.2.0') => {
  const m = JSON.parse(readFileSync(join(pkg, 'plugin.json'), 'utf8'));
  writeFileSync(join(pkg, 'plugin.json'), JSON.stringify({ ...m, version, yolop: { ...m.yolop, ...yolop } }));
};
/** echo's lock entry, parsed as the host parses extensions.lock. */
const lockEntry = () => (parse(lockText()) as { extensions: Array<Record<string, unknown>> }).extensions.find((e) => e.name === 'echo');
/** The grant of the manifest the host reads (through the store entry), computed by the project's own rule. */
const installedGrant = () => grantOf(parseManifest(readFileSync(join(store(), 'echo', 'plugin.json'), 'utf8'), 'echo'));
/** The approved-grant record, as written. */
const grantRecord = () => JSON.parse(readFileSync(join(store(), '.yep-grants', 'echo.json'), 'utf8'));
/** Make the lock look as the host writes it: no `grant` key, no approved-grant record. */
const hostify = () => {
  writeFileSync(lockFile(), lockText().replace(/^grant = ".*"\n/m, ''));
  rmSync(join(store(), '.yep-grants'), { recursive: true, force: true });
};

beforeEach(async () => {
  home = makeTempHome();
  pkg = writePackage(join(home.root, 'src', 'echo'), { name: 'echo', yolop: { tools: [{ name: 'a' }, { name: 'b' }] } });
  expect((await runCli(['install', pkg], { env: home.env })).code).toBe(0);
});
afterEach(() => home.cleanup());

describe('update over a host-written entry (no grant recorded)', () => {
  it('unchanged content is up to date, and the grant is recorded silently', async () => {
    hostify();
    expect(lockText()).not.toMatch(/^grant = /m);
    const r = await runCli(['update', 'echo'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('echo is up to date.');
    expect(lockText()).toMatch(/^grant = "sha256:[0-9a-f]{64}"$/m);
    expect(existsSync(join(store(), '.yep-grants', 'echo.json'))).toBe(true);
    // The recorded grant is the installed manifest's: its fingerprint in the lock, the grant itself in the record.
    const fingerprint = grantFingerprint(installedGrant());
    expect(lockEntry()?.grant).toBe(fingerprint);
    expect(grantRecord()).toEqual(installedGrant());
    expect(grantFingerprint(grantRecord())).toBe(fingerprint);
    expect(jsonOf(await runCli(['info', 'echo', '--json'], { env: home.env }))).toMatchObject({ approved_grant: fingerprint, grant: { fingerprint } });
  });

  it('a dry run records nothing', async () => {
    hostify();
    const before = lockText();
    const r = await runCli(['update', 'echo', '--dry-run'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(lockText()).toBe(before);
  });

  it('changed content asks for the whole grant, as a new install does (not "widens")', async () => {
    hostify();
    setManifest({ tools: [{ name: 'a' }] }); // narrower than installed: still, nothing was approved
    const before = lockText();
    const r = await runCli(['update', 'echo'], { env: home.env });
    expect(r.code).toBe(8);
    expect(r.stdout).toContain('echo contributes:');
    expect(r.stdout).toContain('tools (1)');
    expect(r.stderr).not.toContain('widens');
    expect(lockText()).toBe(before);
    const json = jsonOf(await runCli(['update', 'echo', '--dry-run', '--json'], { env: home.env }));
    expect(json.updates[0]).toMatchObject({ first_approval: true, consent_needed: true });
    const ok = await runCli(['update', 'echo', '--accept', json.updates[0].to.grant], { env: home.env });
    expect(ok.code, ok.stderr).toBe(0);
    expect(lockText()).toContain(`grant = "${json.updates[0].to.grant}"`);
    // That fingerprint is the edited manifest's grant (one tool), recorded in full beside the lock.
    expect(installedGrant().tools.map((t) => t.name)).toEqual(['a']);
    expect(lockEntry()?.grant).toBe(grantFingerprint(installedGrant()));
    expect(grantRecord()).toEqual(installedGrant());
  });
});

describe('unknown lock-entry keys survive every rewrite', () => {
  const addKey = () => writeFileSync(lockFile(), lockText().replace(/^name = "echo"\n/m, 'name = "echo"\nfuture_key = "kept"\n'));

  it('update', async () => {
    addKey();
    setManifest({ tools: [{ name: 'a' }] });
    const r = await runCli(['update', 'echo'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(lockText()).toContain('version = "0.2.0"');
    expect(lockText()).toContain('future_key = "kept"');
  });

  it('install (re-pin)', async () => {
    addKey();
    setManifest({ tools: [{ name: 'a' }] });
    const r = await runCli(['install', pkg], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(lockText()).toContain('version = "0.2.0"');
    expect(lockText()).toContain('future_key = "kept"');
  });

  it('install --frozen after the store was wiped', async () => {
    addKey();
    rmSync(join(store(), 'echo'), { recursive: true, force: true });
    const r = await runCli(['install', '--frozen'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(store(), 'echo', 'plugin.json'))).toBe(true);
    expect(lockText()).toContain('future_key = "kept"');
  });
});

describe('unknown keys under [extensions.source] survive every rewrite', () => {
  /** A key a newer host or another tool wrote into echo's source table. */
  const addSourceKey = () => {
    const text = lockText();
    const at = text.indexOf('[extensions.source]', text.indexOf('name = "echo"'));
    writeFileSync(
      lockFile(),
      `${text.slice(0, at)}[extensions.source]\nmirror_of = "https://example.com/echo"\nseen = [1, 2]${text.slice(at + '[extensions.source]'.length)}`,
    );
  };
  /** echo's source table as the host parses it. */
  const sourceKeys = () => lockEntry()?.source as Record<string, unknown>;
  const kept = () => expect(sourceKeys()).toMatchObject({ type: 'path', mirror_of: 'https://example.com/echo', seen: [1, 2] });

  it('update', async () => {
    addSourceKey();
    setManifest({ tools: [{ name: 'a' }] });
    const r = await runCli(['update', 'echo'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(lockEntry()?.version).toBe('0.2.0');
    kept();
  });

  it('install (re-pin) and install --force (reinstall)', async () => {
    addSourceKey();
    setManifest({ tools: [{ name: 'a' }] });
    const r = await runCli(['install', pkg], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(lockEntry()?.version).toBe('0.2.0');
    kept();
    const f = await runCli(['install', '--force', pkg], { env: home.env });
    expect(f.code, f.stderr).toBe(0);
    kept();
  });

  it('install, then remove, of another extension', async () => {
    addSourceKey();
    const other = writePackage(join(home.root, 'src', 'other'), { name: 'other' });
    expect((await runCli(['install', other], { env: home.env })).code).toBe(0);
    kept();
    expect((await runCli(['remove', 'other'], { env: home.env })).code).toBe(0);
    kept();
  });
});

describe('install --frozen is strict about --lockfile', () => {
  const storeNames = () => (existsSync(store()) ? readdirSync(store()).filter((n) => !n.startsWith('.') && n !== 'extensions.lock') : []);

  it('a missing lockfile: exit 3 naming the path, nothing installed', async () => {
    const fresh = makeTempHome();
    try {
      const file = join(fresh.root, 'no-such.lock');
      const r = await runCli(['install', '--frozen', '--lockfile', file], { env: fresh.env });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(file);
      expect(existsSync(join(fresh.configDir, 'extensions', 'extensions.lock'))).toBe(false);
    } finally {
      fresh.cleanup();
    }
  });

  it('an unreadable lockfile (a FIFO): exit 7 naming the path', async () => {
    const fifo = join(home.root, 'pipe.lock');
    execFileSync('mkfifo', [fifo]);
    const before = lockText();
    const r = await runCli(['install', '--frozen', '--lockfile', fifo], { env: home.env, timeoutMs: 10_000 });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain(fifo);
    expect(lockText()).toBe(before);
  });

  it('a file that is not a lock (valid TOML, no extensions): exit 7 naming the path', async () => {
    const file = join(home.root, 'Cargo.toml');
    writeFileSync(file, '[package]\nname = "x"\nversion = "0.1.0"\n');
    const before = lockText();
    const r = await runCli(['install', '--frozen', '--lockfile', file], { env: home.env });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain(file);
    expect(lockText()).toBe(before);
  });

  // `npm ci` without a lockfile fails; so does `--frozen` with no lock anywhere. It used to
  // exit 0 with a warning, and a CI script that had not put its lock in place was green with
  // nothing installed.
  it('--frozen in a home with no lock at all: exit 3 naming the path, nothing installed', async () => {
    const fresh = makeTempHome();
    try {
      const r = await runCli(['install', '--frozen', '--json'], { env: fresh.env });
      expect(r.code, r.stderr).toBe(3);
      const error = (jsonOf(r) as { error: { code: string; message: string; hint: string } }).error;
      expect(error.code).toBe('E_NOT_FOUND');
      expect(error.message).toContain(join(fresh.configDir, 'extensions', 'extensions.lock'));
      expect(error.hint).toMatch(/--lockfile/);
      const storeDir = join(fresh.configDir, 'extensions');
      expect(existsSync(storeDir) ? readdirSync(storeDir) : []).toEqual([]);
      // Human output: the same refusal on stderr, nothing on stdout.
      const human = await runCli(['install', '--frozen'], { env: fresh.env });
      expect(human.code).toBe(3);
      expect(human.stdout).toBe('');
      expect(human.stderr).toMatch(/There is no lockfile at .*extensions\.lock/);
    } finally {
      fresh.cleanup();
    }
  });

  it('commands that find nothing to act on in a home where nothing was ever installed leave the home as it was (no store created for their lock)', async () => {
    const fresh = makeTempHome();
    try {
      for (const [argv, code] of [
        [['remove', 'nosuch'], 3],
        [['disable', 'nosuch'], 3],
        [['enable', 'nosuch'], 3],
        [['update', '--all'], 0],
        [['verify'], 0],
        [['install', '--frozen'], 3],
      ] as const) {
        const r = await runCli([...argv], { env: fresh.env });
        expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(code);
        expect(existsSync(fresh.configDir), `${argv.join(' ')} created ${fresh.configDir}`).toBe(false);
      }
    } finally {
      fresh.cleanup();
    }
  });

  it('an install that fails before placing anything leaves a never-used home as it was: a missing path, a URL with no repository, a package the host would refuse', async () => {
    const fresh = makeTempHome();
    try {
      const broken = join(fresh.root, 'src', 'broken');
      mkdirSync(broken, { recursive: true });
      writeFileSync(join(broken, 'plugin.json'), '{"name": "broken"');
      // Refused after the agent was asked (its version is cached in the store on the way).
      const future = writePackage(join(fresh.root, 'src', 'future'), { name: 'future' });
      writeFileSync(
        join(future, 'plugin.json'),
        JSON.stringify({ ...JSON.parse(readFileSync(join(future, 'plugin.json'), 'utf8')), engines: { yolop: '>=99' } }),
      );
      const agentEnv = { ...fresh.env, PATH: `${fakeAgent(join(fresh.root, 'agent'), '0.12.1').dir}:${fresh.env.PATH}` };
      for (const [spec, code, extra] of [
        [join(fresh.root, 'nonexistent'), 3, []],
        ['./nonexistent', 3, []],
        [`file://${join(fresh.root, 'no-repo')}`, 3, []],
        [broken, 4, []],
        [future, 4, []],
        // A dry run places nothing, whatever its answer.
        [pkg, 0, ['--dry-run']],
      ] as const) {
        const r = await runCli(['install', spec, '--yes', ...extra], { env: agentEnv, cwd: fresh.root });
        expect(r.code, `${spec}: ${r.stderr}`).toBe(code);
        // No store, no .yep-staging, no config dir: the next list or host sees the home it saw before.
        expect(existsSync(fresh.configDir), `install ${spec} created ${fresh.configDir}`).toBe(false);
      }
      // Where the store exists, a failed install leaves it byte for byte (its .yep-staging included).
      const before = treeOf(store());
      const r = await runCli(['install', join(fresh.root, 'nonexistent'), '--yes'], { env: home.env });
      expect(r.code, r.stderr).toBe(3);
      expect(treeOf(store())).toEqual(before);
    } finally {
      fresh.cleanup();
    }
  });

  // The same rule for the other commands whose whole job is what the store's lock pins.
  it('mirror and lock export in a home with no lock at all: exit 3 naming the path, nothing written', async () => {
    const fresh = makeTempHome();
    try {
      const out = join(fresh.root, 'exported.lock');
      const mirrorDir = join(fresh.root, 'mirror');
      for (const [argv, hint] of [
        [['lock', 'export', out], /install extensions first/],
        [['mirror', mirrorDir], /--lockfile/],
      ] as const) {
        const r = await runCli([...argv, '--json'], { env: fresh.env });
        expect(r.code, `${argv.join(' ')}: ${r.stdout}`).toBe(3);
        const error = (jsonOf(r) as { error: { code: string; message: string; hint: string } }).error;
        expect(error.message).toContain(join(fresh.configDir, 'extensions', 'extensions.lock'));
        expect(error.hint).toMatch(hint);
      }
      expect(existsSync(out), 'no lock exported').toBe(false);
      expect(existsSync(mirrorDir), 'no mirror made').toBe(false);
    } finally {
      fresh.cleanup();
    }
  });

  it('lock export replaces an earlier export, never another file given by mistake (a Cargo.toml, notes): exit 7, the file byte for byte as it was', async () => {
    const notLocks: Record<string, string> = {
      'Cargo.toml': '[package]\nname = "mine"\nversion = "0.1.0"\n',
      'notes.md': '# my notes\n# keep these\n',
      'broken.txt': 'not = toml = at all\n',
    };
    for (const [file, text] of Object.entries(notLocks)) {
      const dest = join(home.root, file);
      writeFileSync(dest, text);
      const r = await runCli(['lock', 'export', dest, '--json'], { env: home.env });
      expect(r.code, `${file}: ${r.stdout}`).toBe(7);
      expect(jsonOf(r).error.message).toContain(dest);
      expect(readFileSync(dest, 'utf8'), file).toBe(text);
    }
    // An earlier export (even one of an empty store lock, comments only) and an empty file are
    // replaced, and read back as the store's lock; a host-written lock only with --force.
    const earlier = join(home.root, 'project.lock');
    const hostLock = `[[extensions]]\nname = "old"\ncontent_hash = "sha256:${'0'.repeat(64)}"\n[extensions.source]\ntype = "path"\npath = "/gone"\n`;
    for (const [before, force] of [
      ['', []],
      ['# extensions.lock: what is installed, pinned by content hash.\n', []],
      [hostLock, ['--force']],
    ] as const) {
      writeFileSync(earlier, before);
      if (force.length > 0) {
        expect((await runCli(['lock', 'export', earlier], { env: home.env })).code).toBe(7);
        expect(readFileSync(earlier, 'utf8')).toBe(before);
      }
      const r = await runCli(['lock', 'export', earlier, ...force], { env: home.env });
      expect(r.code, r.stderr).toBe(0);
      expect((parse(readFileSync(earlier, 'utf8')) as { extensions: { name: string }[] }).extensions.map((e) => e.name)).toEqual(['echo']);
    }
  });

  it('lock export and mirror say what they leave out: a store package no lock entry pins (yolop finds it) is named, and the exported lock indeed lacks it', async () => {
    // Placed by hand beside the locked echo.
    writePackage(join(store(), 'stray'), { name: 'stray' });
    const out = join(home.root, 'exported.lock');
    const r = await runCli(['lock', 'export', out], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/The exported lock does not carry stray/);
    expect((parse(readFileSync(out, 'utf8')) as { extensions: { name: string }[] }).extensions.map((e) => e.name)).toEqual(['echo']);
    const m = await runCli(['mirror', join(home.root, 'mirror')], { env: home.env });
    expect(m.code, m.stderr).toBe(0);
    expect(m.stderr).toMatch(/The mirror does not carry stray/);
    // With no lock at all, the refusal names what the store holds instead of "nothing was ever installed".
    rmSync(lockFile());
    const none = await runCli(['lock', 'export', join(home.root, 'none.lock'), '--json'], { env: home.env });
    expect(none.code).toBe(3);
    const error = jsonOf(none).error;
    expect(error.message).toMatch(/though it holds echo, stray/);
    expect(error.hint).not.toMatch(/Nothing was ever installed/);
    expect(existsSync(join(home.root, 'none.lock'))).toBe(false);
  });

  it('install --frozen --lockfile that cannot fetch an entry for a reason other than its bytes: the failure\'s own exit (a directory not on this machine: 3, not 5 "differs from the lock"), and a never-used home left as it was', async () => {
    const out = join(home.root, 'project.lock');
    // The export says what will happen: echo is pinned as a directory of this machine.
    const exported = await runCli(['lock', 'export', out], { env: home.env });
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toMatch(/pins echo \(.*\) as a directory of this machine/);
    expect(exported.stderr).toContain(pkg);
    const asJson = await runCli(['lock', 'export', out, '--json'], { env: home.env });
    expect(jsonOf(asJson)).toMatchObject({ path: out, entries: 1, local: ['echo'] });
    expect((parse(readFileSync(out, 'utf8')) as { extensions: { source: { path: string } }[] }).extensions[0]?.source.path).toBe(pkg);
    renameSync(pkg, `${pkg}.moved`);
    const fresh = makeTempHome();
    try {
      const r = await runCli(['install', '--frozen', '--lockfile', out, '--json'], { env: fresh.env });
      expect(r.code, r.stdout).toBe(3);
      const error = jsonOf(r).error;
      expect(error).toMatchObject({ code: 'E_NOT_FOUND', details: { failed: [expect.objectContaining({ name: 'echo' })] } });
      expect(error.hint).not.toMatch(/differs from what the lock pins/);
      expect(existsSync(fresh.configDir), 'nothing installed, nothing created').toBe(false);
    } finally {
      fresh.cleanup();
      renameSync(`${pkg}.moved`, pkg);
    }
  });

  it("install --frozen --lockfile with mixed failures: exit 5 for the entry whose bytes differ, the hint names only that one, and the failures are listed in the lock's order", async () => {
    const out = join(home.root, 'mixed.lock');
    expect((await runCli(['lock', 'export', out], { env: home.env })).code).toBe(0);
    const text = readFileSync(out, 'utf8');
    const entry = text.slice(text.indexOf('[[extensions]]'));
    // "absent" (first in the lock) is a directory not on this machine; echo's bytes differ from its hash.
    const absent = entry.replace('name = "echo"', 'name = "absent"').replace(pkg, join(home.root, 'no-such-dir'));
    const tampered = entry.replace(/content_hash = "sha256:[0-9a-f]{64}"/, `content_hash = "sha256:${'0'.repeat(64)}"`);
    writeFileSync(out, `${text.slice(0, text.indexOf('[[extensions]]'))}${absent}\n${tampered}`);
    const fresh = makeTempHome();
    try {
      for (let run = 0; run < 2; run++) {
        const r = await runCli(['install', '--frozen', '--lockfile', out, '--json'], { env: fresh.env });
        expect(r.code, r.stdout).toBe(5);
        const error = jsonOf(r).error;
        expect(error.code).toBe('E_INTEGRITY');
        expect((error.details.failed as { name: string }[]).map((f) => f.name)).toEqual(['absent', 'echo']);
        expect(error.hint).toMatch(/^echo differs from what the lock pins/);
        expect(error.hint).toMatch(/Fix what the other listed extensions failed on/);
        expect(existsSync(fresh.configDir), 'nothing installed, nothing created').toBe(false);
      }
    } finally {
      fresh.cleanup();
    }
  });

  it('a store lock that exists and pins nothing (after removing the last extension): exit 0 with the note', async () => {
    expect((await runCli(['remove', 'echo'], { env: home.env })).code).toBe(0);
    expect(existsSync(lockFile()), 'remove leaves the lock in place').toBe(true);
    const r = await runCli(['install', '--frozen', '--json'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).frozen).toEqual([]);
    expect(r.stderr).toMatch(/pins no extensions: nothing to install/);
    // Exporting it works too, and says what the export will do.
    const out = join(home.root, 'empty-export.lock');
    const e = await runCli(['lock', 'export', out], { env: home.env });
    expect(e.code, e.stderr).toBe(0);
    expect(e.stderr).toMatch(/pins no extensions: the exported lock installs nothing/);
    expect(readFileSync(out, 'utf8')).toBe(lockText());
  });

  it('an empty lock installs nothing and says so on stderr, exit 0', async () => {
    const fresh = makeTempHome();
    try {
      const file = join(fresh.root, 'empty.lock');
      writeFileSync(file, '# extensions.lock: nothing yet\n');
      const r = await runCli(['install', '--frozen', '--lockfile', file, '--json'], { env: fresh.env });
      expect(r.code, r.stderr).toBe(0);
      expect(jsonOf(r).frozen).toEqual([]);
      expect(r.stderr).toMatch(/pins no extensions: nothing to install/);
      home = Object.assign(home, {}); // the other home is untouched
      expect(storeNames()).toEqual(['echo']);
    } finally {
      fresh.cleanup();
    }
  });
});
