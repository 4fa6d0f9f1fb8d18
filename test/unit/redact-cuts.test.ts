/**
 * The rule: redact the whole text before any cut, and mask
 * what a cut leaves of a secret (6 characters or more). The helper itself, then
 * every truncation site below the CLI that quotes text from a server, git, a
 * registry or a native library (the doctor and CLI sites are in
 * test/integration/doctor-secret-cuts.test.ts and test/cli/doctor-cli.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { MIN_FRAGMENT, REDACTED, maskCut, redactText, truncateRedacted } from '../../src/core/text/redact.js';
import { sanitize } from '../../src/core/text/sanitize.js';
import { ByteTail } from '../../src/core/yep/stderr-tail.js';
import { parseLine, snippet } from '../../src/core/yep/framing.js';
import { gitFailure, gitOutputTail } from '../../src/core/sources/git-errors.js';
import { secretFragments } from '../helpers/secret-fragments.js';

const SECRET = 'Zq7-Kx93-Jw5R-Vb28-Tn6Q-Pm41-Hd3L-Yc8U';

describe('truncateRedacted', () => {
  it('cuts a head after redacting the whole text: no piece of a secret spanning the cut', () => {
    for (let at = 0; at < 60; at++) {
      const text = `${'a'.repeat(at)}${SECRET} and the rest`;
      const out = truncateRedacted(text, 40, [SECRET]);
      expect(secretFragments(out, SECRET), `secret at ${at}: ${out}`).toEqual([]);
    }
  });

  it('cuts a tail the same way', () => {
    for (let at = 0; at < 60; at++) {
      const text = `start ${'a'.repeat(at)}${SECRET}${'b'.repeat(at)}`;
      const out = truncateRedacted(text, 30, [SECRET], { keep: 'tail' });
      expect(secretFragments(out, SECRET), out).toEqual([]);
    }
  });

  it('masks a piece of a secret left at an edge the caller had already cut', () => {
    const head = SECRET.slice(0, 12);
    const tail = SECRET.slice(-9);
    expect(truncateRedacted(`prefix ${head}`, 100, [SECRET], { alreadyCut: { end: true } })).toBe(`prefix ${REDACTED}`);
    expect(truncateRedacted(`${tail} suffix`, 100, [SECRET], { alreadyCut: { start: true } })).toBe(`${REDACTED} suffix`);
    expect(maskCut(SECRET.slice(5, 20), [SECRET], { start: true, end: true })).toBe(REDACTED);
  });

  it('leaves pieces shorter than MIN_FRAGMENT, and text with no secret, alone', () => {
    expect(MIN_FRAGMENT).toBe(6);
    expect(truncateRedacted(`prefix ${SECRET.slice(0, 5)}`, 100, [SECRET], { alreadyCut: { end: true } })).toBe(`prefix ${SECRET.slice(0, 5)}`);
    expect(truncateRedacted(`${'a'.repeat(35)}${SECRET}`, 40, [SECRET])).toBe(`${'a'.repeat(35)}… (${35 + REDACTED.length} chars)`);
    expect(truncateRedacted('short', 40, [SECRET])).toBe('short');
    expect(truncateRedacted('x'.repeat(50), 10, [])).toBe(`${'x'.repeat(10)}… (50 chars)`);
  });

  it('never splits a surrogate pair', () => {
    const out = truncateRedacted(`${'a'.repeat(9)}😀tail`, 10, []);
    expect(out.startsWith(`${'a'.repeat(9)}…`)).toBe(true);
  });

  it('finds a secret escaped inside JSON, and credentials in URLs', () => {
    const quoted = 'pa"ss\\word-123456';
    expect(redactText(JSON.stringify({ v: quoted }), [quoted])).toBe(`{"v":"${REDACTED}"}`);
    expect(redactText('fetch https://user:tok3n-value@host/x failed', [])).toBe(`fetch https://${REDACTED}@host/x failed`);
    expect(redactText('ssh://git@host/x and git@host:x stay', [])).toBe('ssh://git@host/x and git@host:x stay');
  });
});

describe('each truncation site below the CLI', () => {
  it('framing snippet (a non-JSON stdout line): the secret across the 200-character cut', () => {
    const line = `${'b'.repeat(190)}${SECRET} more`;
    expect(secretFragments(snippet(line, 200, [SECRET]), SECRET)).toEqual([]);
    const parsed = parseLine(Buffer.from(line), [SECRET]);
    expect(parsed.kind).toBe('malformed');
    expect(parsed.kind === 'malformed' && parsed.reason).toMatch(/^not JSON: b+/);
    expect(secretFragments(parsed.kind === 'malformed' ? parsed.reason : '', SECRET)).toEqual([]);
    // Invalid UTF-8 and a __proto__ key quote the line too.
    const quoted = (p: ReturnType<typeof parseLine>): string => JSON.stringify([p.kind === 'malformed' ? p.reason : '', 'problems' in p ? p.problems : []]);
    const bad = Buffer.concat([Buffer.from(`${'c'.repeat(190)}${SECRET}`), Buffer.from([0xff])]);
    expect(quoted(parseLine(bad, [SECRET]))).toContain('invalid UTF-8');
    expect(secretFragments(quoted(parseLine(bad, [SECRET])), SECRET)).toEqual([]);
    const proto = `{"id":1,"result":{"__proto__":{},"pad":"${'d'.repeat(160)}${SECRET}"}}`;
    expect(quoted(parseLine(Buffer.from(proto), [SECRET]))).toContain('__proto__');
    expect(secretFragments(quoted(parseLine(Buffer.from(proto), [SECRET])), SECRET)).toEqual([]);
    const shape = `["not", "an object", "${'d'.repeat(170)}${SECRET}"]`;
    expect(secretFragments(quoted(parseLine(Buffer.from(shape), [SECRET])), SECRET)).toEqual([]);
  });

  it('the stderr tail: earlier bytes dropped inside the secret', () => {
    for (const keep of [3, 6, 12, 20, SECRET.length - 1]) {
      const tail = new ByteTail(64);
      tail.push(Buffer.from(`${'e'.repeat(100)}${SECRET}`));
      tail.push(Buffer.from('f'.repeat(64 - keep)));
      const text = tail.text([SECRET]);
      expect(text).toMatch(/^…\(\d+ earlier bytes dropped\)\n/);
      expect(secretFragments(text, SECRET), `${keep} bytes of the secret kept: ${text}`).toEqual([]);
    }
  });

  it('sanitize (every terminal string): credentials in a URL are redacted before its cut', () => {
    const text = `${'g'.repeat(190)} https://user:${SECRET}@proxy.example/`;
    const out = sanitize(text, { max: 220 });
    expect(secretFragments(out, SECRET)).toEqual([]);
    expect(sanitize(`${'g'.repeat(190)}${SECRET}`, { max: 200, secrets: [SECRET] })).not.toContain(SECRET.slice(0, 6));
  });

  it("git's stderr in an error (message and --json details): URL credentials cut at 600 characters", () => {
    // The credential starts 9 characters before the 600-character cut.
    const stderr = `remote: ${'h'.repeat(570)} https://bot:${SECRET}@mirror.example/x.git\nfatal: could not read from remote repository`;
    expect(gitOutputTail(stderr)).toMatch(/^remote: h+/);
    expect(secretFragments(gitOutputTail(stderr), SECRET)).toEqual([]);
    const e = gitFailure(stderr, 'fetch', 'https://example.com/x.git');
    expect(secretFragments(`${e.message}\n${JSON.stringify(e.details)}`, SECRET)).toEqual([]);
  });
});

describe('a URL cut inside its userinfo (a credential nobody passed as a secret)', () => {
  const URL = 'http://dave:Fk2Wq9Lp@10.0.0.1:8080/path';
  const pieces = (out: string) => ['Fk2W', 'k2Wq', '2Wq9', 'Wq9L', 'q9Lp'].filter((p) => out.includes(p));
  it('masks what a cut the caller made leaves of it, at the start or at the end', () => {
    for (let at = 1; at < URL.indexOf('@'); at++) {
      const start = truncateRedacted(`${URL.slice(at)} rest`, 200, [], { alreadyCut: { start: true } });
      expect(pieces(start), `cut at ${at}: ${start}`).toEqual([]);
      expect(start).toContain('@10.0.0.1:8080/path rest');
    }
    for (let at = URL.indexOf('//') + 3; at < URL.indexOf('@'); at++) {
      const end = truncateRedacted(`text ${URL.slice(0, at)}`, 200, [], { alreadyCut: { end: true } });
      expect(pieces(end), `cut at ${at}: ${end}`).toEqual([]);
    }
  });
  it('masks what a stream tail (stderr, cut before anything could redact it whole) leaves of it', () => {
    for (let at = 1; at < URL.indexOf('@'); at++) {
      const tail = new ByteTail(`${URL}\n`.length - at);
      tail.push(Buffer.from(`earlier line\n${URL}\n`));
      expect(pieces(tail.text()), tail.text()).toEqual([]);
    }
  });
});
