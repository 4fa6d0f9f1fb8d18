/**
 * readSkillFiles reads what the host's skill scan can reach under `skills/`: a skill directory
 * named `.git` and a file reached through a link inside the package are pinned; a link that
 * leaves the package is recorded by its target only (its bytes never enter a grant), and a
 * link back up the tree is walked once. Real directories and links in a temp dir.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { readSkillFiles } from '../../src/core/package/skill-files.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'skill-files-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

it('a .git skill, a link inside the package (file and directory), a link outside it, a loop', () => {
  const pkg = join(root, 'pkg');
  mkdirSync(join(pkg, 'skills', '.git'), { recursive: true });
  mkdirSync(join(pkg, 'docs', 'more'), { recursive: true });
  writeFileSync(join(pkg, 'skills', '.git', 'SKILL.md'), 'hidden words');
  writeFileSync(join(pkg, 'docs', 'a.md'), 'linked words');
  writeFileSync(join(pkg, 'docs', 'more', 'SKILL.md'), 'through a linked directory');
  writeFileSync(join(root, 'secret'), 'a file of the user, outside the package');
  mkdirSync(join(pkg, 'skills', 's'));
  symlinkSync('../../docs/a.md', join(pkg, 'skills', 's', 'SKILL.md'));
  symlinkSync('../docs/more', join(pkg, 'skills', 'more'));
  symlinkSync('../../../secret', join(pkg, 'skills', 's', 'outside'));
  symlinkSync('..', join(pkg, 'skills', 's', 'up'));
  const files = readSkillFiles(pkg);
  const byPath = new Map(files.map((f) => [f.path, f]));
  expect(byPath.get('skills/.git/SKILL.md')).toMatchObject({ text: 'hidden words' });
  expect(byPath.get('skills/s/SKILL.md')).toMatchObject({ link: '../../docs/a.md', text: 'linked words' });
  expect(byPath.get('skills/more/SKILL.md')).toMatchObject({ text: 'through a linked directory' });
  expect(byPath.get('skills/s/outside')).toEqual({ path: 'skills/s/outside', link: '../../../secret' });
  expect(JSON.stringify(files)).not.toContain('outside the package');
  // The link back to skills/ is recorded once and not walked again.
  expect(byPath.get('skills/s/up')).toEqual({ path: 'skills/s/up', link: '..' });
  expect(files.filter((f) => f.path.startsWith('skills/s/up/'))).toEqual([]);
});

it('a link to a file inside the package whose name only starts with two dots is read, not taken for outside', () => {
  const pkg = join(root, 'pkg');
  mkdirSync(join(pkg, 'skills', 's'), { recursive: true });
  writeFileSync(join(pkg, '..notes.md'), 'words in a dot-dot file');
  symlinkSync('../../..notes.md', join(pkg, 'skills', 's', 'SKILL.md'));
  const file = readSkillFiles(pkg).find((f) => f.path === 'skills/s/SKILL.md');
  expect(file).toMatchObject({ link: '../../..notes.md', text: 'words in a dot-dot file' });
});
