/**
 * Strict decoding of tar header blocks, PAX records and GNU long names.
 *
 * Why not node-tar's Parser: it is built to extract *something* from damaged
 * archives. It drops a negative PAX `size` silently, cuts PAX values at a NUL,
 * skips malformed PAX lines, forces a directory's size to 0 (so its "body" is read
 * as headers) and only warns on a bad checksum. An installer must refuse all of
 * those, so every field here is decoded by a rule that either yields a clean value
 * or throws a TarFormatError naming what was wrong.
 */

export const BLOCK = 512;

/** A structural defect in the archive; `rule` is a stable id for tests and --json. */
export class TarFormatError extends Error {
  constructor(
    readonly rule: string,
    message: string,
  ) {
    super(message);
    this.name = 'TarFormatError';
  }
}

type HeaderFormat = 'ustar' | 'gnu';

export interface TarHeader {
  /** Path bytes as stored (ustar prefix joined), before any PAX/GNU override. */
  name: Buffer;
  mode: number;
  size: number;
  /** The typeflag character; an old-style NUL flag is reported as '0'. */
  type: string;
  /** Link target bytes (empty for anything that is not a link). */
  linkname: Buffer;
  format: HeaderFormat;
}

/** Human names for the entry types the policy refuses (so messages say what was found). */
const TYPE_NAMES: Readonly<Record<string, string>> = {
  '0': 'regular file',
  '1': 'hard link',
  '2': 'symbolic link',
  '3': 'character device',
  '4': 'block device',
  '5': 'directory',
  '6': 'FIFO',
  '7': 'contiguous file',
  g: 'PAX global header',
  x: 'PAX extended header',
  A: 'Solaris ACL record',
  D: 'GNU dump directory',
  E: 'Solaris extended attribute',
  I: 'inode-only record',
  K: 'GNU long link name',
  L: 'GNU long name',
  M: 'GNU multi-volume continuation',
  N: 'GNU old long name',
  S: 'GNU sparse file',
  V: 'volume label',
  X: 'Solaris extended header',
};

export function describeType(type: string): string {
  const printable = /^[\x21-\x7e]$/.test(type) ? `'${type}'` : `0x${type.charCodeAt(0).toString(16).padStart(2, '0')}`;
  return TYPE_NAMES[type] ? `${TYPE_NAMES[type]} (type ${printable})` : `unknown entry type ${printable}`;
}

export function isZeroBlock(buf: Buffer, off: number): boolean {
  for (let i = off; i < off + BLOCK; i++) if (buf[i] !== 0) return false;
  return true;
}

/** Bytes up to the first NUL of a fixed-width field. */
function cString(buf: Buffer, off: number, len: number): Buffer {
  const field = buf.subarray(off, off + len);
  const nul = field.indexOf(0);
  return nul === -1 ? field : field.subarray(0, nul);
}

/**
 * A numeric field: octal digits with optional leading spaces and trailing NUL/space
 * padding, or GNU base-256 (first byte 0x80 positive, 0xff negative). An empty field
 * is 0. Anything else (stray characters, negative numbers, more than 2^53) throws.
 */
export function decodeNumber(buf: Buffer, off: number, len: number, field: string): number {
  const first = buf[off]!;
  if (first & 0x80) {
    if (first === 0xff) throw new TarFormatError('negative-number', `negative ${field} in a tar header`);
    if (first !== 0x80) throw new TarFormatError('bad-number', `malformed base-256 ${field} in a tar header`);
    let n = 0;
    for (let i = off + 1; i < off + len; i++) {
      n = n * 256 + buf[i]!;
      if (n > Number.MAX_SAFE_INTEGER) throw new TarFormatError('bad-number', `${field} in a tar header is too large`);
    }
    return n;
  }
  let i = off;
  const end = off + len;
  while (i < end && buf[i] === 0x20) i++;
  let n = 0;
  for (; i < end; i++) {
    const c = buf[i]!;
    if (c < 0x30 || c > 0x37) break;
    n = n * 8 + (c - 0x30);
  }
  for (; i < end; i++) {
    const c = buf[i]!;
    if (c !== 0 && c !== 0x20) {
      throw new TarFormatError('bad-number', `malformed ${field} field in a tar header (${JSON.stringify(buf.subarray(off, end).toString('latin1'))})`);
    }
  }
  if (n > Number.MAX_SAFE_INTEGER) throw new TarFormatError('bad-number', `${field} in a tar header is too large`);
  return n;
}

/**
 * Decode one non-zero header block. Verifies the checksum (the unsigned sum; the
 * signed sum some historic tars wrote is accepted as GNU tar does) and the magic:
 * POSIX ustar (with its 155-byte prefix field) or GNU (no prefix). V7 and unknown
 * formats are refused: nothing that produces a .crate writes them.
 */
export function decodeHeader(buf: Buffer, off: number): TarHeader {
  const stored = decodeNumber(buf, off + 148, 8, 'checksum');
  let unsigned = 0;
  let signed = 0;
  for (let i = off; i < off + BLOCK; i++) {
    const b = i >= off + 148 && i < off + 156 ? 0x20 : buf[i]!;
    unsigned += b;
    signed += b > 127 ? b - 256 : b;
  }
  if (stored !== unsigned && stored !== signed) {
    throw new TarFormatError('bad-checksum', `tar header checksum mismatch (stored ${stored}, computed ${unsigned})`);
  }

  const magic = buf.subarray(off + 257, off + 263).toString('latin1');
  const version = buf.subarray(off + 263, off + 265).toString('latin1');
  let format: HeaderFormat;
  if (magic === 'ustar\0') format = 'ustar';
  else if (magic === 'ustar ' && version === ' \0') format = 'gnu';
  else throw new TarFormatError('bad-format', 'tar header is neither POSIX ustar nor GNU format');

  let name = cString(buf, off, 100);
  if (format === 'ustar') {
    // The prefix is up to 155 bytes; star-style headers keep atime/ctime after a
    // 130-byte prefix, which reading up to the first NUL handles too.
    const prefix = cString(buf, off + 345, 155);
    if (prefix.length > 0) name = Buffer.concat([prefix, Buffer.from('/'), name]);
  }

  const flag = String.fromCharCode(buf[off + 156]!);
  return {
    name,
    mode: decodeNumber(buf, off + 100, 8, 'mode'),
    size: decodeNumber(buf, off + 124, 12, 'size'),
    type: flag === '\0' ? '0' : flag,
    linkname: cString(buf, off + 157, 100),
    format,
  };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Paths must be valid UTF-8 (cargo's are; anything else cannot be compared reliably). */
export function decodePath(bytes: Buffer): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new TarFormatError('bad-utf8', `path is not valid UTF-8 (${JSON.stringify(bytes.toString('latin1'))})`);
  }
}

/**
 * PAX extended-header records: `<len> <key>=<value>\n`, where len counts the whole
 * record. Every record must be well formed and the data must be nothing but
 * records; a NUL anywhere in a key or value is refused (it is how one tar reader
 * is made to see a different name than another).
 */
export function parsePaxRecords(data: Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  let pos = 0;
  while (pos < data.length) {
    const space = data.indexOf(0x20, pos);
    if (space === -1 || space === pos || space - pos > 20) throw new TarFormatError('bad-pax', 'malformed PAX record (no length)');
    const lenText = data.subarray(pos, space).toString('latin1');
    if (!/^[1-9][0-9]*$/.test(lenText)) throw new TarFormatError('bad-pax', `malformed PAX record length ${JSON.stringify(lenText)}`);
    const len = Number(lenText);
    const end = pos + len;
    if (end > data.length || end <= space + 1) throw new TarFormatError('bad-pax', 'PAX record length runs past the header data');
    if (data[end - 1] !== 0x0a) throw new TarFormatError('bad-pax', 'PAX record does not end with a newline');
    const record = data.subarray(space + 1, end - 1);
    const eq = record.indexOf(0x3d);
    if (eq <= 0) throw new TarFormatError('bad-pax', 'PAX record has no key');
    const keyBytes = record.subarray(0, eq);
    const value = record.subarray(eq + 1);
    const key = keyBytes.toString('utf8');
    if (keyBytes.includes(0) || value.includes(0)) {
      throw new TarFormatError('pax-nul', `NUL byte in the PAX record ${JSON.stringify(key.replace(/\0/g, '\\0'))}`);
    }
    out.set(key, value);
    pos = end;
  }
  return out;
}

/** A PAX `size` value: plain decimal digits only (no sign, exponent or fraction). */
export function parsePaxSize(value: Buffer): number {
  const text = value.toString('latin1');
  if (!/^[0-9]{1,16}$/.test(text) || Number(text) > Number.MAX_SAFE_INTEGER) {
    throw new TarFormatError(text.startsWith('-') ? 'negative-number' : 'bad-pax', `invalid PAX size ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/** A GNU `././@LongLink` body: the name, then NUL padding only. */
export function parseLongName(data: Buffer): Buffer {
  const nul = data.indexOf(0);
  if (nul === -1) return data;
  for (let i = nul; i < data.length; i++) {
    if (data[i] !== 0) throw new TarFormatError('longname-nul', 'NUL byte inside a GNU long name');
  }
  return data.subarray(0, nul);
}
