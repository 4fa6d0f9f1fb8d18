import { describe, expect, it } from 'vitest';
import { textDiff } from '../../src/cli/text-diff.js';

const show = (lines: ReturnType<typeof textDiff>) => lines.map((l) => `${l.sign} ${l.text}`);

describe('textDiff: a changed text as a person reads it', () => {
  it('one line reworded: the old and the new line', () => {
    expect(show(textDiff('Greets.', 'Greets loudly.'))).toEqual(['- Greets.', '+ Greets loudly.']);
  });

  it('no old text known: the new text whole, as added', () => {
    expect(show(textDiff(undefined, 'a\nb'))).toEqual(['+ a', '+ b']);
  });

  it('keeps one line of context around a change and folds longer unchanged runs into …', () => {
    const before = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].join('\n');
    const after = ['a', 'b', 'c', 'D', 'e', 'f', 'g'].join('\n');
    expect(show(textDiff(before, after))).toEqual(['… ', '  c', '- d', '+ D', '  e', '… ']);
  });

  it('cuts a long line around its first difference, both sides at the same place', () => {
    const head = 'x'.repeat(500);
    const lines = textDiff(`${head} keep the user safe ${'y'.repeat(500)}`, `${head} send ~/.ssh away ${'y'.repeat(500)}`, { width: 60 });
    expect(lines).toHaveLength(2);
    for (const l of lines) {
      expect(l.text.startsWith('…')).toBe(true);
      expect(l.text).toMatch(/…\(\+\d+ characters\)$/);
      expect([...l.text].length).toBeLessThanOrEqual(62 + '(+000 characters)'.length);
    }
    expect(lines[0]!.text).toContain('keep the user');
    expect(lines[1]!.text).toContain('send ~/.ssh');
  });

  it('a URL with a credential is redacted before the line is cut: no piece of the token is left at the cut', () => {
    const token = 'ghp_0123456789abcdefghijklmnopqrstuvwxyzABCD';
    const lines = textDiff('fetch from the mirror', `fetch from https://deploy:${token}@git.example.test/x.git please`, { width: 40 });
    const text = lines.map((l) => l.text).join('\n');
    expect(text).not.toMatch(/ghp_|0123|ABCD/);
  });

  it('counts the trailing blanks of a changed line, which a terminal does not show', () => {
    expect(show(textDiff('Greets.', 'Greets.   '))).toEqual(['- Greets.', '+ Greets. (+3 trailing blanks)']);
    expect(show(textDiff('a\nb', 'a\n\t'))).toEqual(['  a', '- b', '+ (+1 trailing blank)']);
  });

  it('shows at most a screenful and counts the rest', () => {
    const after = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n');
    const lines = textDiff('', after, { maxLines: 10 });
    expect(lines).toHaveLength(11);
    expect(lines.at(-1)).toEqual({ sign: '…', text: '31 more changed lines (the whole text is in --json)' });
  });

  it('neutralises terminal escapes and bidi controls in every line it shows', () => {
    const lines = textDiff('ok', 'bad\u001b[2J\u0007\u202e\rmore');
    expect(show(lines)).toEqual(['- ok', '+ bad\\u001b[2J\\u0007\\u202e\\u000dmore']);
  });

  it('a text too large to match line by line is shown as replaced (old lines, then new)', () => {
    const big = (tag: string) => Array.from({ length: 1000 }, (_, i) => `${tag}${i}`).join('\n');
    const lines = textDiff(big('a'), big('b'), { maxLines: 4 });
    expect(lines.slice(0, 4).every((l) => l.sign === '-')).toBe(true);
    expect(lines.at(-1)?.text).toBe('1996 more changed lines (the whole text is in --json)');
  });
});
