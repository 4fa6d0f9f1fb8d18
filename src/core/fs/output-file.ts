/**
 * A path the user names for yep-ext to write (`lock export PATH`, `policy init
 * --output`, `mirror DIR`), checked before anything is read or written. One rule for
 * all of them, as `git clone`, `cargo new` and `npm init` behave for the thing they
 * make: yep-ext creates the file or the directory you name, never the directories
 * above it (a typo in `/mnt/shrae/mirror` must not create `/mnt/shrae`). A parent that
 * does not exist is E_NOT_FOUND (exit 3, the hint: `mkdir -p` it); a directory where a
 * file is named (or a file where a directory is) is the user's mistake, said as one with
 * the command to type instead, not a state failure ("Could not write …: ENOENT", or
 * "move the directory aside", which for `lock export /tmp` would mean moving /tmp).
 */
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { YepError } from '../errors.js';
import { sanitize } from '../text/sanitize.js';

/**
 * Throw E_USAGE when `file` is a directory (the hint: `example` of a file in it named
 * `defaultName`), E_NOT_FOUND when its directory does not exist (the hint: mkdir -p).
 */
export function checkOutputFile(file: string, defaultName: string, example: (file: string) => string): void {
  const kind = (p: string): 'dir' | 'other' | 'missing' => {
    try {
      return statSync(p).isDirectory() ? 'dir' : 'other';
    } catch {
      return 'missing';
    }
  };
  if (kind(file) === 'dir') {
    throw new YepError('E_USAGE', `${sanitize(file)} is a directory, not a file.`, {
      hint: `Name a file in it: \`${sanitize(example(join(file, defaultName)))}\`.`,
    });
  }
  assertParentExists(file);
}

function kindOf(p: string): 'dir' | 'other' | 'missing' {
  try {
    return statSync(p).isDirectory() ? 'dir' : 'other';
  } catch {
    return 'missing';
  }
}

/** The directory `path` would be made in exists (E_NOT_FOUND, exit 3, otherwise: yep-ext makes no directory above what it is asked to write). */
function assertParentExists(path: string): void {
  const parent = dirname(path);
  if (kindOf(parent) !== 'dir') {
    throw new YepError('E_NOT_FOUND', `The directory ${sanitize(parent)} does not exist.`, {
      hint: `Create it first (mkdir -p ${sanitize(parent)}), or pick another path.`,
      details: { dir: parent },
    });
  }
}

/**
 * A directory the user names for yep-ext to fill (`mirror DIR`): `missing` (yep-ext
 * makes it; its parent must exist) or `dir` (a directory, or a symlink to one). A file
 * there is E_USAGE (exit 2).
 */
export function checkOutputDir(dir: string): 'missing' | 'dir' {
  const kind = kindOf(dir);
  if (kind === 'dir') return 'dir';
  if (kind === 'other') throw new YepError('E_USAGE', `${sanitize(dir)} exists and is not a directory.`, { hint: 'Give a new or empty directory.' });
  assertParentExists(dir);
  return 'missing';
}
