import { isAbsolute, join, relative, sep } from 'node:path';
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

it('answers as path.relative does for any shape of path, normal or not', () => {
  const viaRelative = (root: string, p: string): boolean => {
    const rel = relative(root, p);
    return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
  };
  const shapes = [
    '/',
    '/p',
    '/p/',
    '/p/pkg',
    '/p/pkg/',
    '/p/pkg/bin',
    '/p/pkg-other/x',
    '/p/pkg/../pkg/x',
    '/p/./pkg/x',
    '//p/pkg/x',
    '/p/pkg/..',
    '/p/pkg/.x',
    '/p/pkg/..x/y',
    '/p/pkgx',
    'p/pkg',
    '.',
    '',
  ];
  for (const root of shapes) for (const p of shapes) expect([root, p, isInside(root, p)]).toEqual([root, p, viaRelative(root, p)]);
});
