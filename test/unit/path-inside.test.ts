import { join } from 'node:path';
import { expect, it } from 'vitest';
import { isInside } from '../../src/core/fs/path-inside.js';

it('inside: the root itself and below it, a name that only starts with two dots included; not a .. component, not elsewhere', () => {
  const root = '/p/pkg';
  expect(isInside(root, root)).toBe(true);
  expect(isInside(root, join(root, 'bin', 'srv'))).toBe(true);
  expect(isInside(root, join(root, '..notes.md'))).toBe(true);
  expect(isInside(root, '/p')).toBe(false);
  expect(isInside(root, '/p/pkg-other/x')).toBe(false);
  expect(isInside(root, '/p/other')).toBe(false);
  expect(isInside(root, '/elsewhere')).toBe(false);
});
