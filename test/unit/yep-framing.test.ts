import { describe, expect, it } from 'vitest';
import { LineSplitter, classifyMessage, parseLine } from '../../src/core/yep/framing.js';

function split(chunks: (string | Buffer)[], max = 64): { lines: string[]; overflows: number[] } {
  const lines: string[] = [];
  const overflows: number[] = [];
  const s = new LineSplitter(max, { line: (b) => lines.push(b.toString()), overflow: (n) => overflows.push(n) });
  for (const c of chunks) s.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
  return { lines, overflows };
}

describe('LineSplitter', () => {
  it.each([
    [['a\nb\n'], ['a', 'b']],
    [['a', 'b', 'c\n'], ['abc']],
    [['a\n\nb\n'], ['a', '', 'b']],
    [['abc'], []],
    [
      ['ab\ncd', 'ef\n'],
      ['ab', 'cdef'],
    ],
  ])('%j -> %j', (chunks, lines) => {
    expect(split(chunks).lines).toEqual(lines);
  });

  it('reports an oversized line once, skips it to its newline, and resumes', () => {
    const r = split(['x'.repeat(40), 'y'.repeat(40), 'z'.repeat(1000), '\nok\n'], 64);
    expect(r.overflows).toHaveLength(1);
    expect(r.lines).toEqual(['ok']);
  });

  it('holds at most the cap in memory for an endless line', () => {
    const s = new LineSplitter(1024, { line: () => {}, overflow: () => {} });
    for (let i = 0; i < 1000; i++) s.push(Buffer.alloc(64 * 1024, 0x61));
    expect(s.takeRest()).toBeUndefined();
  });
});

describe('classifyMessage (by fields, host-compat §8)', () => {
  it.each([
    [{ id: 1, method: 'x' }, 'request'],
    [{ method: 'x' }, 'notification'],
    [{ method: 'x', id: null }, 'notification'],
    [{ id: 3, result: {} }, 'response'],
    [{ id: 3, error: { message: 'no' } }, 'response'],
    [{ id: 3 }, 'response'],
    [{ id: '3', result: {} }, 'malformed'],
    [{ id: 1.5, method: 'x' }, 'malformed'],
    [{ method: 7 }, 'malformed'],
    [{ result: {} }, 'malformed'],
    [[1, 2], 'malformed'],
    ['text', 'malformed'],
    [null, 'malformed'],
  ])('%j is a %s', (value, kind) => {
    expect(classifyMessage(value).kind).toBe(kind);
  });

  it('ignores an inbound jsonrpc member and reads error presence as failure', () => {
    expect(classifyMessage({ jsonrpc: '2.0', id: 2, error: { message: 'x' } })).toMatchObject({ kind: 'response', ok: false });
    expect(classifyMessage({ jsonrpc: '2.0', id: 2, result: 5 })).toMatchObject({ kind: 'response', ok: true, result: 5 });
  });
});

describe('parseLine', () => {
  it('skips blank lines and strips a trailing CR', () => {
    expect(parseLine(Buffer.from('   '))).toEqual({ kind: 'blank' });
    expect(parseLine(Buffer.from('{"method":"log"}\r'))).toMatchObject({ kind: 'notification', method: 'log' });
  });

  it.each([
    ['banner text', 'not JSON'],
    ['{"id": 1, "resu', 'not JSON'],
    ['[1]', 'expected a JSON object'],
  ])('reports %j as malformed (%s) with a snippet', (line, reason) => {
    const r = parseLine(Buffer.from(line));
    expect(r.kind).toBe('malformed');
    expect((r as { reason: string }).reason).toContain(reason);
  });

  it('reports invalid UTF-8', () => {
    const r = parseLine(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    expect(r).toMatchObject({ kind: 'malformed' });
    expect((r as { reason: string }).reason).toContain('invalid UTF-8');
  });

  it('caps the snippet of a long bad line', () => {
    const r = parseLine(Buffer.from(`garbage ${'x'.repeat(10_000)}`)) as { reason: string };
    expect(r.reason.length).toBeLessThan(300);
  });

  it('removes __proto__ keys (also escaped ones) and reports them; nothing is polluted', () => {
    const r = parseLine(Buffer.from('{"id":1,"result":{"__proto__":{"polluted":1},"a":{"\\u005f_proto__":{"polluted":2}}}}'));
    expect(r).toMatchObject({ kind: 'response', ok: true, result: { a: {} } });
    expect((r as { problems: string[] }).problems[0]).toContain('__proto__');
    const result = (r as { result: Record<string, unknown> }).result;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect({ ...result }.polluted).toBeUndefined();
  });
});
