/**
 * Take the server binary out of a verified artifact: the file itself (`bin`),
 * one regular file from a tar (plain or gzip'd) or from a zip. The rules of the
 * crate unpacker, reduced to one file: exactly one regular file is picked (by
 * its path inside the archive when the metadata names one, else by its file
 * name), never a link, device or `..` path, never larger than the cap.
 */
import { removeWork } from '../fs/custody.js';
import { mkdtemp, readFile, rename, stat } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import * as tar from 'tar';
import type { PkgFmt } from './binstall-meta.js';
import { safeEntryName, zipEntries, zipRead } from './zip-pick.js';
import { DISK_FULL_CODES, errnoCode, stateIoError } from '../errors.js';

export type Pick = { path: string } | { fileName: string };

function normalize(p: string): string {
  return p.replace(/^(\.\/)+/, '').replace(/\/{2,}/g, '/');
}

function matches(entryPath: string, pick: Pick): boolean {
  const p = normalize(entryPath);
  return 'path' in pick ? p === normalize(pick.path) : basename(p) === pick.fileName;
}

function describe(pick: Pick): string {
  return 'path' in pick ? `the path ${pick.path}` : `a file named ${pick.fileName}`;
}

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
): Promise<string | undefined> {
  switch (fmt) {
    case 'bin':
      await rename(artifact, dest);
      return undefined;
    case 'tgz':
    case 'tar':
      return extractFromTar(artifact, pick, dest, tmpParent, maxBytes);
    case 'zip':
      return extractFromZip(artifact, pick, dest, maxBytes);
    default:
      return `the artifact format ${fmt} is not one yep-ext unpacks (use tgz, tar, zip or bin)`;
  }
}

async function extractFromTar(archive: string, pick: Pick, dest: string, tmpParent: string, maxBytes: number): Promise<string | undefined> {
  const tmp = await mkdtemp(join(tmpParent, '.yep-binary-'));
  try {
    let picked: string | undefined;
    let tooBig = false;
    try {
      tar.x({
        file: archive,
        cwd: tmp,
        sync: true,
        strict: true,
        maxReadSize: 1 << 20,
        filter: (p, entry) => {
          const e = entry as { type?: string; size?: number };
          if (picked !== undefined || e.type !== 'File' || !safeEntryName(p) || !matches(p, pick)) return false;
          if ((e.size ?? 0) > maxBytes) {
            tooBig = true;
            return false;
          }
          picked = p;
          return true;
        },
      });
    } catch (e) {
      diskFullFails(e, dest);
      return `the archive does not unpack (${(e as Error).message})`;
    }
    if (tooBig) return `${describe(pick)} in the archive is larger than the ${maxBytes}-byte limit`;
    if (picked === undefined) return `the archive holds no regular file at ${describe(pick)}`;
    const file = join(tmp, picked);
    if (!(await stat(file)).isFile()) return `the archive holds no regular file at ${describe(pick)}`;
    await rename(file, dest);
    return undefined;
  } finally {
    await removeWork(tmp);
  }
}

async function extractFromZip(archive: string, pick: Pick, dest: string, maxBytes: number): Promise<string | undefined> {
  try {
    const buf = await readFile(archive);
    const entry = zipEntries(buf).find((e) => e.regular && safeEntryName(e.name) && matches(e.name, pick));
    if (!entry) return `the zip archive holds no regular file at ${describe(pick)}`;
    writeFileSync(dest, zipRead(buf, entry, maxBytes), { mode: 0o600 });
    return undefined;
  } catch (e) {
    diskFullFails(e, dest);
    return `the zip archive is unusable: ${(e as Error).message}`;
  }
}

/** A full disk while extracting is the disk's state, not an unusable archive: the one I/O mapping (exit 7). */
function diskFullFails(e: unknown, dest: string): void {
  const code = errnoCode(e);
  if (code !== undefined && DISK_FULL_CODES.has(code)) throw stateIoError('extract the server binary into', dest, e);
}
