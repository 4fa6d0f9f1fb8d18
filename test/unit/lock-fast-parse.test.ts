import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { parseLockTomlFast } from '../../src/core/store/lock-fast-parse.js';
import { serializeLock, type LockEntry } from '../../src/core/store/lockfile.js';

/** Deep comparison that also checks prototypes (smol-toml tables have none). */
function sameAsSmolToml(text: string): void {
  const fast = parseLockTomlFast(text);
  expect(fast, 'the fast reader should handle this text').toBeDefined();
  const slow = parseToml(text);
  expect(fast).toStrictEqual(slow);
  const protos = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(protos)
      : v !== null && typeof v === 'object'
        ? [Object.getPrototypeOf(v), Object.entries(v).map(([k, x]) => [k, protos(x)])]
        : typeof v;
  expect(protos(fast)).toEqual(protos(slow));
}

/** The fast reader declines; smol-toml's answer (value or error) is what the lock code then sees. */
function declined(text: string): void {
  expect(parseLockTomlFast(text)).toBeUndefined();
}

const HASH = `sha256:${'a'.repeat(64)}`;

function entry(i: number, name: string, extra: Partial<LockEntry> = {}): LockEntry {
  const kinds: LockEntry['source'][] = [
    { type: 'crate', crate_name: `yolop-extension-${name}`, version: `${i}.0.0`, cksum: 'b'.repeat(64), requirement: '^1', index: 'http://127.0.0.1:1/index/' },
    { type: 'git', url: `https://example.com/${name}.git`, rev: 'c'.repeat(40), requested_ref: 'main' },
    { type: 'path', path: `/home/u/ext/${name}` },
  ];
  return { name, content_hash: HASH, version: `${i}.0.0`, grant: HASH, source: kinds[i % 3]!, ...extra };
}

describe('parseLockTomlFast', () => {
  it('reads what serializeLock writes, exactly as smol-toml does', () => {
    sameAsSmolToml(serializeLock({ entries: [], extra: {} }));
    sameAsSmolToml(serializeLock({ entries: Array.from({ length: 50 }, (_, i) => entry(i, `ext${i}`)), extra: {} }));
    sameAsSmolToml(serializeLock({ entries: [entry(1, 'a')], extra: { version: 3, note: 'top-level keys survive', flag: false } }));
  });

  it('decodes escapes, unicode and integers like smol-toml', () => {
    const odd = [
      'quote " and \\ backslash',
      'tab\tnewline\ncr\r',
      'bell \u0007 nul \u0000 esc \u001b del-free',
      'é 日本 😀 \u2028 line sep',
      '',
      '#not a comment',
      ' = [x] ',
    ];
    sameAsSmolToml(serializeLock({ entries: odd.map((text, i) => entry(i, `e${i}`, { version: text, note: text } as Partial<LockEntry>)), extra: {} }));
    sameAsSmolToml('[[extensions]]\nn = 0\np = 42\nq = -7\nr = +3\ns = 123456789012345\nt = true\nu = false\n');
    sameAsSmolToml('\r\n# c\r\n[[extensions]]\r\nname = "x"\r\n\t[ extensions . source ]\r\n  type = "path"   \r\n\r\n');
  });

  it('declines everything outside its subset', () => {
    for (const text of [
      'a = 1.5',
      'a = 1_000',
      'a = 0123',
      'a = 1234567890123456',
      'a = -0',
      "a = 'literal'",
      'a = """multi"""',
      'a = [1, 2]',
      'a = { b = 1 }',
      'a = 1979-05-27',
      'a = "x" # trailing comment',
      'a.b = 1',
      '"quoted" = 1',
      'a = "\\U0001F600"',
      'a = "\\e"',
      'a = "\\ud83d\\ude00"',
      'a = "raw\ttab"',
      'a = 1\na = 2',
      '__proto__ = 1',
      '[table]\na = 1',
      '[[a]]\n[[b]]',
      '[[a]]\n[a.s]\n[a.s]',
      '[a.s]',
      '[[a]]\ns = 1\n[a.s]',
      '[[a]]\n[a.s.t]',
      'extensions = 1\n[[extensions]]',
      '\ufeff[[extensions]]',
      'garbage',
    ]) {
      declined(text);
    }
  });

  it('never disagrees with smol-toml on random near-TOML text (declining is always allowed)', () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed % n;
    };
    const pieces = [
      '[[extensions]]',
      '[extensions.source]',
      '[extensions.x]',
      '[[other]]',
      'name',
      'type',
      '=',
      ' ',
      '\t',
      '"',
      '\\',
      '\\u00e9',
      '\\"',
      'a',
      '1',
      '0',
      '-',
      '+',
      'true',
      '[]',
      '#',
      '\n',
      '\r\n',
      'é',
      '\u0001',
      '\u007f',
      '_',
      '.',
    ];
    let accepted = 0;
    for (let i = 0; i < 3000; i++) {
      const lines = Array.from({ length: 1 + rnd(8) }, () => {
        const shape = rnd(4);
        if (shape === 0) return pieces[rnd(4)];
        const value = Array.from({ length: rnd(6) }, () => pieces[4 + rnd(pieces.length - 4)]).join('');
        return shape === 1 ? `k${rnd(3)} = "${value}"` : shape === 2 ? `k${rnd(3)} = ${value}` : value;
      });
      const text = lines.join('\n');
      const fast = parseLockTomlFast(text);
      let slow: unknown;
      try {
        slow = parseToml(text);
      } catch {
        expect(fast, JSON.stringify(text)).toBeUndefined();
        continue;
      }
      if (fast !== undefined) {
        accepted++;
        expect(fast, JSON.stringify(text)).toStrictEqual(slow);
      }
    }
    expect(accepted).toBeGreaterThan(100); // the comparison was not vacuous
  });

  it('is what parseLock uses: the result validates the same way', async () => {
    const { parseLock } = await import('../../src/core/store/lockfile.js');
    const text = serializeLock({ entries: [entry(0, 'a'), entry(1, 'b'), entry(2, 'c')], extra: { version: 1 } });
    const lock = parseLock(text);
    expect(lock.entries.map((e) => e.name)).toEqual(['a', 'b', 'c']);
    expect(lock.extra).toEqual({ version: 1 });
    // A duplicate name is still caught (by parseLock, after the fast read).
    expect(() => parseLock(`${text}\n[[extensions]]\nname = "a"\ncontent_hash = "${HASH}"\n[extensions.source]\ntype = "path"\npath = "/x"\n`)).toThrow(
      /appears twice/,
    );
  });
});
