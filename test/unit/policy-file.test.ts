/** The policy file: strict parsing with file and line, and the tighten-only merge rule by rule. */
import { describe, expect, it } from 'vitest';
import { mergePolicy, nameMatches, parsePolicy } from '../../src/core/policy/policy-file.js';
import { policyViolations } from '../../src/core/policy/evaluate.js';

const layer = (text: string, file: string) => parsePolicy(text, file);

describe('parsePolicy', () => {
  it('reads every rule', () => {
    const l = layer(
      [
        '[sources]',
        'kinds = ["crate", "git"]',
        'index_urls = ["sparse+https://mirror.example/index"]',
        'git_hosts = ["GitHub.com"]',
        '[names]',
        'allow = ["team-*"]',
        'deny = ["*-beta"]',
        '[cooldown]',
        'min_age = "36h"',
        '[binaries]',
        'require_in_crate = true',
        '[grant]',
        'hooks = "scoped"',
        'secrets = false',
        '[pins]',
        `lsp = "sha256:${'a'.repeat(64)}"`,
      ].join('\n'),
      'p.toml',
    );
    expect(l).toMatchObject({
      kinds: ['crate', 'git'],
      index_urls: ['https://mirror.example/index/'],
      git_hosts: ['github.com'],
      allow: ['team-*'],
      deny: ['*-beta'],
      min_age_ms: 36 * 3_600_000,
      require_in_crate_binary: true,
      hooks: 'scoped',
      grant: { secrets: false },
      pins: { lsp: `sha256:${'a'.repeat(64)}` },
    });
  });

  it.each([
    ['[sources]\nkinds = ["crate", "svn"]\n', 2, /unknown source kind "svn"/],
    ['[names]\n\nallow = "x"\n', 3, /must be an array of strings/],
    ['[cooldown]\nmin_age = "3 days"\n', 2, /must be a duration/],
    ['[grant]\nhooks = "some"\n', 2, /must be one of/],
    ['[grant]\nprompts = "no"\n', 2, /must be true or false/],
    ['[grant]\nwhatever = false\n', 2, /unknown key "whatever"/],
    ['[extras]\na = 1\n', 1, /unknown section/],
    ['version = 1\n', 1, /unknown section or key "version"/],
    [`[pins]\nlsp = "md5:x"\n`, 2, /content hash/],
    ['[names\n', 1, /invalid TOML/],
  ])('%j is refused at line %i', (text, line, why) => {
    expect(() => layer(text, '/etc/p.toml')).toThrow(why);
    try {
      layer(text, '/etc/p.toml');
    } catch (e) {
      expect((e as Error).message).toContain(`/etc/p.toml is malformed (line ${line})`);
    }
  });
});

describe('mergePolicy: the second file can only tighten', () => {
  const sys = layer(
    '[sources]\nkinds = ["crate"]\ngit_hosts = ["a.example"]\n[names]\ndeny = ["bad"]\nallow = ["t-*"]\n[cooldown]\nmin_age = "3d"\n[binaries]\nrequire_in_crate = true\n[grant]\nhooks = "none"\nsecrets = false\n',
    'sys',
  );
  const loose = layer(
    '[sources]\nkinds = ["crate", "path"]\ngit_hosts = ["a.example", "b.example"]\n[names]\ndeny = []\nallow = ["*"]\n[cooldown]\nmin_age = "1h"\n[binaries]\nrequire_in_crate = false\n[grant]\nhooks = "any"\nsecrets = true\n',
    'user',
  );
  const p = mergePolicy([sys, loose]);

  it('allow-lists intersect, deny-lists union, ages max, booleans OR, grant the narrower', () => {
    expect(p.kinds).toEqual(['crate']);
    expect(p.git_hosts).toEqual(['a.example']);
    expect(p.deny.map((d) => d.glob)).toEqual(['bad']);
    expect(p.allow.map((a) => a.globs)).toEqual([['t-*'], ['*']]);
    expect(p.min_age_ms).toBe(3 * 86_400_000);
    expect(p.min_age_file).toBe('sys');
    expect(p.require_in_crate_binary).toBe(true);
    expect(p.max_grant.hooks).toBe('none');
    expect(p.max_grant.switches.secrets).toBe(false);
    expect(p.files).toEqual(['sys', 'user']);
  });

  it('a stricter user file tightens', () => {
    const q = mergePolicy([
      layer('[grant]\nhooks = "scoped"\n', 'sys'),
      layer('[grant]\nhooks = "none"\ncommands = false\n[cooldown]\nmin_age = "1w"\n', 'user'),
    ]);
    expect(q.max_grant.hooks).toBe('none');
    expect(q.max_grant.switches.commands).toBe(false);
    expect(q.min_age_file).toBe('user');
  });

  it('name globs', () => {
    expect(nameMatches('team-*', 'team-one')).toBe(true);
    expect(nameMatches('team-*', 'xteam-one')).toBe(false);
    expect(nameMatches('a?c', 'abc')).toBe(true);
    expect(nameMatches('a?c', 'abbc')).toBe(false);
  });
});

describe('policyViolations: [pins] fails closed', () => {
  const [aa, bb] = [`sha256:${'a'.repeat(64)}`, `sha256:${'b'.repeat(64)}`];
  const pins = mergePolicy([layer(`[pins]\nalpha = "${aa}"\n`, 'sys')]);

  it('a pinned name whose tree could not be hashed is refused, not skipped; an unpinned one is "not one of them" either way', () => {
    expect(policyViolations(pins, { name: 'alpha', unhashable: 'EACCES: permission denied' })).toEqual([
      expect.objectContaining({ rule: 'pins', item: 'alpha', message: expect.stringMatching(/could not be hashed \(EACCES: permission denied\)/) }),
    ]);
    expect(policyViolations(pins, { name: 'stray', unhashable: 'EACCES' })).toEqual([
      expect.objectContaining({ rule: 'pins', item: 'stray', message: expect.stringMatching(/not one of them/) }),
    ]);
    expect(policyViolations(pins, { name: 'alpha', content_hash: aa })).toEqual([]);
    expect(policyViolations(pins, { name: 'alpha', content_hash: bb })).toEqual([expect.objectContaining({ rule: 'pins', item: `alpha@${bb}` })]);
  });
});
