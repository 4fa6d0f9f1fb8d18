/**
 * A file path the user names for yep-ext to write (`lock export PATH`, `policy init
 * --output`), checked before anything is read or written: a directory there, or a
 * parent directory that does not exist, is the user's mistake, said as one with the
 * command to type instead, not a state failure ("Could not write …: ENOENT", or "move
 * the directory aside", which for `lock export /tmp` would mean moving /tmp).
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
  const parent = dirname(file);
  if (kind(parent) !== 'dir') {
    throw new YepError('E_NOT_FOUND', `The directory ${sanitize(parent)} does not exist.`, {
      hint: `Create it first (mkdir -p ${sanitize(parent)}), or pick another path.`,
    });
  }
}
