/**
 * The zip format for the one archive reader (unpack.ts): a strict, minimal decoder of
 * an archive held in memory (end-of-central-directory, central directory, each kept
 * entry's local header, then stored or deflate data through node:zlib inflateRaw,
 * output capped, checked against the recorded size and CRC-32), whose entries pass the
 * same rules as a tar's (unpack-policy's EntryRules: regular files and directories
 * only, the path rules, collisions, the caps) before a byte is written. Refused besides:
 * zip64, multi-disk, encryption, other methods. Only prebuilt binaries' archives that
 * already passed their digest or signature check reach it.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { crc32, inflateRawSync } from 'node:zlib';
import type { ContentHashStream } from '../package/content-hash-stream.js';
import { EntryRules, normalizeMode, type ExtractLimits, type OtherKinds } from './unpack-policy.js';

export class ZipError extends Error {}

const EOCD_SIG = 0x06054b50;
const CEN_SIG = 0x02014b50;
const LOC_SIG = 0x04034b50;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

export interface ZipEntryInfo {
  name: string;
  method: number;
  flags: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
  /** What the entry is, from its name and (for an archive made on Unix) its mode. */
  kind: 'file' | 'dir' | 'link' | 'other';
  /** The Unix mode bits, when the archive records them (0 otherwise). */
  mode: number;
}

function findEocd(buf: Buffer): number {
  const min = Math.max(0, buf.length - (0xffff + 22));
  for (let i = buf.length - 22; i >= min; i--) if (buf.readUInt32LE(i) === EOCD_SIG) return i;
  throw new ZipError('not a zip archive (no end-of-central-directory record)');
}

/** Every central-directory entry, checked for shape. */
export function zipEntries(buf: Buffer): ZipEntryInfo[] {
  if (buf.length < 22) throw new ZipError('not a zip archive (too short)');
  const eocd = findEocd(buf);
  const disk = buf.readUInt16LE(eocd + 4);
  const cdDisk = buf.readUInt16LE(eocd + 6);
  const count = buf.readUInt16LE(eocd + 10);
  const cdSize = buf.readUInt32LE(eocd + 12);
  const cdOffset = buf.readUInt32LE(eocd + 16);
  if (disk !== 0 || cdDisk !== 0) throw new ZipError('multi-disk zip archives are not supported');
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) throw new ZipError('zip64 archives are not supported');
  if (cdOffset + cdSize > eocd) throw new ZipError('the central directory lies outside the archive');
  const out: ZipEntryInfo[] = [];
  let p = cdOffset;
  for (let n = 0; n < count; n++) {
    if (p + 46 > eocd || buf.readUInt32LE(p) !== CEN_SIG) throw new ZipError('damaged central directory');
    const madeBy = buf.readUInt16LE(p + 4) >> 8;
    const flags = buf.readUInt16LE(p + 8);
    const method = buf.readUInt16LE(p + 10);
    const crc = buf.readUInt32LE(p + 16);
    const compressedSize = buf.readUInt32LE(p + 20);
    const size = buf.readUInt32LE(p + 24);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const external = buf.readUInt32LE(p + 38);
    const localOffset = buf.readUInt32LE(p + 42);
    if (p + 46 + nameLen > eocd) throw new ZipError('damaged central directory');
    const name = buf.subarray(p + 46, p + 46 + nameLen).toString(flags & 0x800 ? 'utf8' : 'latin1');
    const unixMode = madeBy === 3 ? external >>> 16 : 0;
    const type = unixMode & S_IFMT;
    const kind =
      type === S_IFLNK
        ? 'link'
        : name.endsWith('/') || (external & 0x10) !== 0 || type === S_IFDIR
          ? 'dir'
          : unixMode === 0 || type === S_IFREG
            ? 'file'
            : 'other';
    out.push({ name, method, flags, crc, compressedSize, size, localOffset, kind, mode: unixMode & 0o7777 });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

/** The bytes of `entry`, verified. */
export function zipRead(buf: Buffer, entry: ZipEntryInfo, maxBytes: number): Buffer {
  if (entry.flags & 0x1) throw new ZipError(`${entry.name} is encrypted`);
  if (entry.size > maxBytes) throw new ZipError(`${entry.name} is larger than the ${maxBytes}-byte limit`);
  const p = entry.localOffset;
  if (p + 30 > buf.length || buf.readUInt32LE(p) !== LOC_SIG) throw new ZipError(`damaged local header for ${entry.name}`);
  const start = p + 30 + buf.readUInt16LE(p + 26) + buf.readUInt16LE(p + 28);
  const end = start + entry.compressedSize;
  if (end > buf.length) throw new ZipError(`${entry.name} runs past the end of the archive`);
  const raw = buf.subarray(start, end);
  let data: Buffer;
  if (entry.method === 0) data = Buffer.from(raw);
  else if (entry.method === 8) {
    try {
      data = inflateRawSync(raw, { maxOutputLength: Math.max(1, entry.size) });
    } catch (e) {
      throw new ZipError(`${entry.name} does not inflate (${(e as Error).message})`);
    }
  } else throw new ZipError(`${entry.name} uses compression method ${entry.method} (only stored and deflate are supported)`);
  if (data.length !== entry.size) throw new ZipError(`${entry.name} is ${data.length} bytes, not the recorded ${entry.size}`);
  if (crc32(data) >>> 0 !== entry.crc >>> 0) throw new ZipError(`${entry.name} fails its CRC-32 check`);
  return data;
}

/**
 * Unpack the zip archive `buf` into the existing empty directory `into`, entry by entry
 * in central-directory order, under the same rules as a tar (`root` as unpack.ts passes
 * it): every entry is checked before the archive's first byte is written, then the
 * directories are made and the kept files written (created exclusively, never through
 * a link, modes normalised). Returns how many regular files the archive holds.
 */
export function unzipInto(
  buf: Buffer,
  into: string,
  root: string,
  limits: ExtractLimits,
  options: { keep?: (rel: string, size: number) => boolean; hasher?: ContentHashStream; otherKinds?: OtherKinds } = {},
): number {
  const { keep, hasher } = options;
  const rules = new EntryRules(root, limits, options.otherKinds);
  const dirs: string[] = [];
  const files: { entry: ZipEntryInfo; rel: string }[] = [];
  for (const entry of zipEntries(buf)) {
    if (entry.kind === 'dir') {
      dirs.push(...rules.directory(entry.name));
      continue;
    }
    if (entry.kind !== 'file') {
      rules.otherKind(entry.name, entry.kind === 'link' ? 'a symbolic link' : 'a special file (a device, FIFO or socket)', true);
      continue;
    }
    const placed = rules.file(entry.name, entry.size);
    if (!placed) continue;
    dirs.push(...placed.dirs);
    if (keep === undefined || keep(placed.rel, entry.size)) files.push({ entry, rel: placed.rel });
  }
  for (const rel of dirs) {
    mkdirSync(`${into}/${rel}`, { mode: 0o755 });
    chmodSync(`${into}/${rel}`, 0o755);
  }
  for (const { entry, rel } of files) {
    const data = zipRead(buf, entry, entry.size);
    const mode = normalizeMode(entry.mode, false);
    hasher?.beginFile(rel, data.length);
    hasher?.data(data, 0, data.length);
    writeFileSync(`${into}/${rel}`, data, { mode, flag: 'wx' });
    chmodSync(`${into}/${rel}`, mode);
  }
  return rules.files;
}
