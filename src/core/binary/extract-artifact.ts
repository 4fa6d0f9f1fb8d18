/**
 * Take the server binary out of a verified artifact: the file itself (`bin`), or one
 * regular file of a tar (plain or gzip'd) or a zip, read by the one strict archive
 * reader (archive/unpack.ts) under the crate rules (the path rules, collisions, the caps)
 * with a binary archive's two differences: no `{name}-{version}/` root (entries anywhere),
 * and links, devices and FIFOs read past, never written, rather than refused. Exactly one file is written: the first,
 * in archive order, at the path the metadata names, else with the command's file name;
 * never larger than the cap.
 */
import { removeWork } from '../fs/custody.js';
import { renameSync } from 'node:fs';
import { lstat, mkdtemp, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { unpackArchive } from '../archive/unpack.js';
import type { PkgFmt } from './binstall-meta.js';
import { DISK_FULL_CODES, errnoCode, isYepError } from '../errors.js';

export type Pick = { path: string } | { fileName: string };

function normalize(p: string): string {
  return p.replace(/^(\.\/)+/, '').replace(/\/{2,}/g, '/');
}

function matches(rel: string, pick: Pick): boolean {
  return 'path' in pick ? rel === normalize(pick.path) : basename(rel) === pick.fileName;
}

function describe(pick: Pick): string {
  return 'path' in pick ? `the path ${pick.path}` : `a file named ${pick.fileName}`;
}

const FORMATS = { tgz: 'tar.gz', tar: 'tar', zip: 'zip' } as const;

/**
 * Put the picked file of `artifact` at `dest`. Returns undefined on success,
 * else why nothing was placed.
 */
export async function extractArtifact(
  artifact: string,
  fmt: PkgFmt,
  pick: Pick,
  dest: string,
  tmpParent: string,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<string | undefined> {
  // `dest` is in the staged package tree and absent (provision-binary.ts checks before it downloads).
  if (fmt === 'bin') {
    renameSync(artifact, dest);
    return undefined;
  }
  const format = fmt in FORMATS ? FORMATS[fmt as keyof typeof FORMATS] : undefined;
  if (!format) return `the artifact format ${fmt} is not one yep-ext unpacks (use tgz, tar, zip or bin)`;
  const tmp = await mkdtemp(join(tmpParent, '.yep-binary-'));
  try {
    let picked: string | undefined;
    let tooBig = false;
    const tree = join(tmp, 'tree');
    try {
      await unpackArchive(artifact, tree, {
        label: 'the prebuilt binary archive',
        root: '',
        format,
        // One file is taken: a link or a device beside it is read past, as it always was.
        otherKinds: 'skip',
        compressedSize: (await stat(artifact)).size,
        ...(signal ? { signal } : {}),
        keep: (rel, size) => {
          if (picked !== undefined || !matches(rel, pick)) return false;
          if (size > maxBytes) {
            tooBig = true;
            return false;
          }
          picked = rel;
          return true;
        },
        hint: 'yep-ext takes a prebuilt binary only from an archive whose entries are plain files and directories (see docs/binaries.md).',
      });
    } catch (e) {
      if (!isYepError(e) || e.code !== 'E_UNSAFE_PACKAGE') diskFullOrInterrupted(e);
      return (e as Error).message.replace(/\.$/, '');
    }
    if (tooBig) return `${describe(pick)} in the archive is larger than the ${maxBytes}-byte limit`;
    if (picked === undefined) return `the archive holds no regular file at ${describe(pick)}`;
    const file = join(tree, picked);
    if (!(await lstat(file)).isFile()) return `the archive holds no regular file at ${describe(pick)}`;
    renameSync(file, dest);
    return undefined;
  } finally {
    await removeWork(tmp);
  }
}

/**
 * What fails the install rather than becoming a note: the disk's state (a full disk, the one
 * I/O mapping, exit 7) and Ctrl-C. Anything else the reader could not do is a note.
 */
function diskFullOrInterrupted(e: unknown): void {
  if (isYepError(e) && e.code === 'E_INTERRUPTED') throw e;
  const code = errnoCode(isYepError(e) ? e.cause : e);
  if (code !== undefined && DISK_FULL_CODES.has(code)) throw e;
}
