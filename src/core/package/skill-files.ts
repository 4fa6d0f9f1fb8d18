/**
 * The files of a package's `skills/` directory, as the grant pins them. An extension that
 * declares `skills` has its `skills/` tree mounted read-only into the agent's skill scan
 * (spec "Skills"): every SKILL.md is text the model reads, and the files beside it are
 * what a skill tells the model to read or run. So the grant holds each file's digest, and
 * the text of each small UTF-8 file so a changed word can be shown as a diff.
 *
 * Nothing under `skills/` is left out: the content hash skips every `.git` directory and
 * every symlink, but the host's scan loads a skill directory named `.git` and reads a
 * SKILL.md through a link, so those bytes are pinned here or nowhere. A symlink is recorded
 * by its target and, when it leads to a file or directory inside the package (a path
 * package may hold links; fetched packages are refused them), by what it reaches: editing
 * the linked file is a change like editing the file itself. A link that leaves the package
 * is recorded by its target alone (yep-ext does not read the user's disk into a grant).
 * Synchronous like loadManifest, its only caller: skills trees are small, and only
 * packages that declare `skills` are read.
 */
import { lstatSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { realPathOf } from '../fs/real-path.js';
import { readRegularFileSync } from '../fs/read-regular-file.js';
import { compareUtf8 } from './content-hash.js';
import { isInside } from '../fs/path-inside.js';
import { isYepError, stateIoError } from '../errors.js';
import { join } from 'node:path';
import { sha256Hex } from '../fs/hash.js';

/** The directory the host mounts for a package that declares `skills`. */
const SKILLS_DIR = 'skills';
/** Files up to this size that are UTF-8 without NUL are kept as text (shown in a diff); larger ones by digest only. */
const TEXT_MAX_BYTES = 64 * 1024;

/** One entry under `skills/`: a regular file by digest (and text), or a symlink by target (and the file it reaches inside the package). */
export type SkillFile = { path: string; digest: string; text?: string } | { path: string; link: string; digest?: string; text?: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

function textOf(bytes: Buffer): string | undefined {
  if (bytes.length > TEXT_MAX_BYTES || bytes.includes(0)) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

function contentOf(file: string, followSymlinks: boolean): { digest: string; text?: string } | undefined {
  const bytes = readRegularFileSync(file, 'A skill file', {
    followSymlinks,
    hint: 'The skills/ directory of a package holds plain files and directories.',
  });
  if (bytes === undefined) return undefined;
  const text = textOf(bytes);
  return { digest: `sha256:${sha256Hex(bytes)}`, ...(text !== undefined ? { text } : {}) };
}

/**
 * Every regular file and symlink under `<dir>/skills` (paths relative to the package root,
 * with `/`, sorted by UTF-8 bytes as the content hash sorts), `.git` included; a link to a
 * directory inside the package is walked through (each directory once), a link to a file
 * inside it carries that file's digest and text. Empty when the package has no `skills/`.
 * Special files (FIFOs, sockets, devices) are not read and not listed: the host's scan
 * reads SKILL.md files, which such a file cannot be.
 */
export function readSkillFiles(dir: string): SkillFile[] {
  const out: SkillFile[] = [];
  const root = realPathOf(dir) ?? dir;
  // Directories already walked (by real path): a link back up the tree is recorded, not followed again.
  const walked = new Set<string>();
  const walk = (abs: string, rel: string): void => {
    const real = realPathOf(abs);
    if (real === undefined || walked.has(real)) return;
    walked.add(real);
    for (const name of readdirSync(abs)) visit(`${abs}/${name}`, `${rel}/${name}`);
  };
  const visit = (abs: string, rel: string): void => {
    const st = lstatSync(abs, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isSymbolicLink()) {
      const link = readlinkSync(abs);
      const real = realPathOf(abs);
      const target = real !== undefined && isInside(root, real) ? statSync(real, { throwIfNoEntry: false }) : undefined;
      const content = target?.isFile() ? contentOf(abs, true) : undefined;
      out.push({ path: rel, link, ...content });
      if (target?.isDirectory()) walk(abs, rel);
    } else if (st.isFile()) {
      const content = contentOf(abs, false);
      if (content) out.push({ path: rel, ...content });
    } else if (st.isDirectory()) walk(abs, rel);
  };
  try {
    visit(`${dir}/${SKILLS_DIR}`, SKILLS_DIR);
  } catch (e) {
    // An unreadable directory or link is the package's problem to report (E_STATE), not an internal error.
    if (isYepError(e)) throw e;
    throw stateIoError('read the skill files of', join(dir, SKILLS_DIR), e);
  }
  return out.sort((a, b) => compareUtf8(a.path, b.path));
}
