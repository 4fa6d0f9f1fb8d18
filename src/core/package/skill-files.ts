/**
 * The files of a package's `skills/` directory, as the grant pins them. An extension that
 * declares `skills` has its `skills/` tree mounted read-only into the agent's skill scan
 * (spec "Skills"): every SKILL.md is text the model reads, and the files beside it are
 * what a skill tells the model to read or run. So the grant holds each file's digest, and
 * the text of each small UTF-8 file so a changed word can be shown as a diff. A symlink is
 * recorded as its target (the host's scan follows links; the content hash does not).
 * Synchronous like loadManifest, its only caller: skills trees are small, and only
 * packages that declare `skills` are read.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { readRegularFileSync } from '../fs/read-regular-file.js';
import { compareUtf8 } from './content-hash.js';

/** The directory the host mounts for a package that declares `skills`. */
const SKILLS_DIR = 'skills';
/** Files up to this size that are UTF-8 without NUL are kept as text (shown in a diff); larger ones by digest only. */
const TEXT_MAX_BYTES = 64 * 1024;

/** One entry under `skills/`: a regular file by digest (and text), or a symlink by target. */
export type SkillFile = { path: string; digest: string; text?: string } | { path: string; link: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

function textOf(bytes: Buffer): string | undefined {
  if (bytes.length > TEXT_MAX_BYTES || bytes.includes(0)) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

function fileEntry(file: string, rel: string): SkillFile | undefined {
  const bytes = readRegularFileSync(file, 'A skill file', {
    followSymlinks: false,
    hint: 'The skills/ directory of a package holds plain files and directories.',
  });
  if (bytes === undefined) return undefined;
  const text = textOf(bytes);
  return { path: rel, digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`, ...(text !== undefined ? { text } : {}) };
}

/**
 * Every regular file and symlink under `<dir>/skills` (paths relative to the package root,
 * with `/`, sorted by UTF-8 bytes as the content hash sorts), `.git` skipped; a `skills`
 * that is itself a link is one entry. Empty when the package has no `skills/`. Special
 * files (FIFOs, sockets, devices) are not read and not listed: the host's scan reads
 * SKILL.md files, which such a file cannot be.
 */
export function readSkillFiles(dir: string): SkillFile[] {
  const out: SkillFile[] = [];
  const visit = (abs: string, rel: string): void => {
    const st = lstatSync(abs, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isSymbolicLink()) out.push({ path: rel, link: readlinkSync(abs) });
    else if (st.isFile()) {
      const entry = fileEntry(abs, rel);
      if (entry) out.push(entry);
    } else if (st.isDirectory()) {
      for (const name of readdirSync(abs)) if (name !== '.git') visit(`${abs}/${name}`, `${rel}/${name}`);
    }
  };
  visit(`${dir}/${SKILLS_DIR}`, SKILLS_DIR);
  return out.sort((a, b) => compareUtf8(a.path, b.path));
}
