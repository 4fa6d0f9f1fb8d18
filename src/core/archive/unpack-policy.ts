/**
 * The per-entry rules of the unpack policy (docs/unpack.md), kept free of I/O so each
 * rule is testable on its own and every archive format passes the same ones (tar for
 * crates and prebuilt binaries, zip for prebuilt binaries): entry types, path shape,
 * the root, depth, length, count and size caps, collisions, and mode normalisation.
 *
 * The root is the one parameter: a crate's entries must all be under its
 * `{name}-{version}/` directory (stripped); a prebuilt binary's archive has no such
 * rule (`''`: entries anywhere, a leading `./` being the archive's own root).
 */
import { foldName } from './fold-name.js';

export interface ExtractLimits {
  /** Sum of the sizes of all files. */
  maxTotalBytes: number;
  /** Files and directories created (implicit directories included), `.cargo-ok` counted. */
  maxEntries: number;
  /** Path components below the root (a file at the root is 1). */
  maxDepth: number;
  /** UTF-8 bytes of an entry's full path inside the archive. */
  maxPathBytes: number;
}

/** A rule the archive broke; `entry` is the path as found in the archive. */
export class PolicyViolation extends Error {
  constructor(
    readonly rule: string,
    readonly entry: string,
    message: string,
  ) {
    super(message);
    this.name = 'PolicyViolation';
  }
}

export interface PathLimits {
  maxPathBytes: number;
  maxDepth: number;
}

// C0 controls and DEL: legal in Unix names, but they exist in an archive only to
// garble a terminal or a log line.
const CONTROL = /[\u0000-\u001f\u007f]/;
const DRIVE = /^[A-Za-z]:/;
const MAX_NAME_BYTES = 255;

/**
 * Validate one entry path and return its components below the root (empty for the root
 * directory itself). A single trailing `/` is allowed on directories only. `root`: the
 * directory every entry must be under (a crate's `{name}-{version}`), or `''` for none.
 */
export function entryComponents(path: string, isDir: boolean, root: string, limits: PathLimits): string[] {
  const fail = (rule: string, what: string): never => {
    throw new PolicyViolation(rule, path, what);
  };
  const bytes = Buffer.byteLength(path, 'utf8');
  if (bytes > limits.maxPathBytes) fail('path-length', `its path is ${bytes} bytes long (the limit is ${limits.maxPathBytes})`);
  if (path === '') fail('empty-path', 'it has an empty path');
  if (CONTROL.test(path)) fail('control-char', 'its path contains a control character');
  if (path.includes('\\')) fail('backslash', 'its path contains a backslash (a Windows path separator)');
  if (path.startsWith('/')) fail('absolute', 'it is an absolute path');
  let body = path;
  if (body.endsWith('/')) {
    if (!isDir) fail('trailing-slash', 'it is a regular file whose path ends with "/"');
    body = body.slice(0, -1);
  }
  // An archive with no root rule may name its own root `.` (what `tar -C dir .` writes): `./bin/x` is `bin/x`.
  if (root === '' && (body === '.' || body.startsWith('./'))) {
    body = body.slice(2);
    if (body === '') return [];
  }
  const comps = body.split('/');
  for (const c of comps) {
    if (c === '') fail('empty-component', 'its path has an empty component ("//")');
    if (c === '..') fail('dotdot', 'its path contains a ".." component');
    if (c === '.') fail('dot', 'its path contains a "." component');
    if (DRIVE.test(c)) fail('drive-letter', 'its path contains a Windows drive letter');
    // Filesystems cap a name at 255 bytes; failing later would look like a disk error.
    if (c.length > 85 && Buffer.byteLength(c, 'utf8') > MAX_NAME_BYTES) fail('name-length', `a component of its path is longer than ${MAX_NAME_BYTES} bytes`);
  }
  if (root === '') {
    if (comps.length > limits.maxDepth) fail('depth', `it is ${comps.length} levels below the root (the limit is ${limits.maxDepth})`);
    return comps;
  }
  if (comps[0] !== root) fail('root', `it is not under the crate's root directory "${root}/" (every entry must be)`);
  const depth = comps.length - 1;
  if (depth > limits.maxDepth) fail('depth', `it is ${depth} levels below the root (the limit is ${limits.maxDepth})`);
  return comps.slice(1);
}

/** Files: 0755 if any execute bit was set (so a server script stays runnable), else 0644. Directories: 0755. */
export function normalizeMode(mode: number, isDir: boolean): number {
  if (isDir) return 0o755;
  return mode & 0o111 ? 0o755 : 0o644;
}

/** How names compare on case-insensitive or normalising filesystems (macOS, Windows): fold-name.ts. */
export { foldName };

/** What the index knows of a path, as a small integer (no object per path: the peak RSS of many-file crates). */
const FILE = 1;
const DIR = 2;
/** The directory had an entry of its own (not only created for a file inside it). */
const EXPLICIT = 4;
/** A record of a path whose folded name differs from it: the kind as one digit, then the path. */
const KIND_DIGIT = 48; // '0'

/**
 * Everything placed so far. It refuses the same path twice, a file and a directory
 * of one name, and two names that only differ in case or Unicode normalisation (on
 * macOS/Windows one would overwrite the other, and which one wins depends on archive
 * order). It returns the directories the caller must create, parents first.
 *
 * One map, keyed by the folded path (foldName), holds each path once: its kind as a
 * number when the path is its own folded name (every lower-case ASCII path: for those
 * foldName returns the same string), else one string, the kind's digit followed by
 * the path. So a path costs one map entry and, in the common case, no string beyond
 * the one the caller already holds: what survives a young collection per entry is
 * what grows V8's young generation on a 20,000-file crate. One lookup answers both
 * "is this path known" and "does a
 * different name fold onto it".
 */
export class TreeIndex {
  private readonly byFold = new Map<string, number | string>();
  private rootSeen = false;

  constructor(private readonly root: string) {}

  /** How many paths (files and directories, implicit ones too) the index holds. */
  get size(): number {
    return this.byFold.size;
  }

  private full(rel: string): string {
    return this.root === '' ? rel : `${this.root}/${rel}`;
  }

  /**
   * The kind of `rel` if it was placed (0: it was not), after refusing a different
   * placed path with the same folded name.
   */
  private kindOf(rel: string, folded: string, entry: string): number {
    const known = this.byFold.get(folded);
    if (known === undefined) return 0;
    let other: string;
    if (typeof known === 'number') {
      if (rel === folded) return known;
      other = folded;
    } else {
      other = known.slice(1);
      if (other === rel) return known.charCodeAt(0) - KIND_DIGIT;
    }
    throw new PolicyViolation(
      'collision',
      entry,
      `"${this.full(rel)}" and "${this.full(other)}" differ only in letter case or Unicode normalization (one would overwrite the other on macOS and Windows)`,
    );
  }

  private set(rel: string, folded: string, kind: number): void {
    this.byFold.set(folded, rel === folded ? kind : `${String.fromCharCode(KIND_DIGIT + kind)}${rel}`);
  }

  private ensureParents(comps: string[], entry: string, out: string[]): void {
    let p = '';
    for (let i = 0; i < comps.length - 1; i++) {
      p = i === 0 ? comps[0]! : `${p}/${comps[i]}`;
      const folded = foldName(p);
      const known = this.kindOf(p, folded, entry);
      if (known !== 0) {
        if (known & FILE) {
          throw new PolicyViolation('file-dir-conflict', entry, `it needs "${this.full(p)}" to be a directory, but that is a file in the archive`);
        }
        continue;
      }
      this.set(p, folded, DIR);
      out.push(p);
    }
  }

  /**
   * Register a regular file; returns the directories to create first. `rel` is
   * `comps.join('/')`: a caller that keeps the path (the content hash does) passes
   * its own string so the index holds the same one.
   */
  addFile(comps: string[], entry: string, rel: string = comps.join('/')): string[] {
    const out: string[] = [];
    this.ensureParents(comps, entry, out);
    const folded = foldName(rel);
    const known = this.kindOf(rel, folded, entry);
    if (known !== 0) {
      throw known & FILE
        ? new PolicyViolation('duplicate', entry, 'the same path appears twice in the archive')
        : new PolicyViolation('file-dir-conflict', entry, 'it is a file, but the archive also has a directory of that name');
    }
    this.set(rel, folded, FILE);
    return out;
  }

  /** Register a directory entry; returns the directories to create (itself last). */
  addDir(comps: string[], entry: string): string[] {
    if (comps.length === 0) {
      if (this.rootSeen) throw new PolicyViolation('duplicate', entry, 'the same path appears twice in the archive');
      this.rootSeen = true;
      return [];
    }
    const out: string[] = [];
    this.ensureParents(comps, entry, out);
    const rel = comps.join('/');
    const folded = foldName(rel);
    const known = this.kindOf(rel, folded, entry);
    if (known !== 0) {
      if (known & FILE) throw new PolicyViolation('file-dir-conflict', entry, 'it is a directory, but the archive also has a file of that name');
      // A directory first created implicitly (for a file inside it) may still get its own entry once.
      if (known & EXPLICIT) throw new PolicyViolation('duplicate', entry, 'the same path appears twice in the archive');
      this.set(rel, folded, known | EXPLICIT);
      return out;
    }
    this.set(rel, folded, DIR | EXPLICIT);
    out.push(rel);
    return out;
  }
}

/** What an archive's links, devices and FIFOs do: reject it, or be read past (EntryRules). */
export type OtherKinds = 'refuse' | 'skip';

/** A file entry's place: its path below the root, and the directories to create first (parents first). */
export interface PlacedFile {
  rel: string;
  dirs: string[];
}

/**
 * The rules every entry of one archive passes, in archive order, whatever the format:
 * the kinds of entry, the path rules, the tree (collisions), and the caps on entries
 * and bytes. A reader decodes its format and asks this before it writes anything;
 * the first violation throws a PolicyViolation and rejects the whole archive.
 */
export class EntryRules {
  private readonly tree: TreeIndex;
  private entries = 0;
  private totalBytes = 0;
  /** Regular files accepted so far (a crate's `.cargo-ok` aside). */
  files = 0;

  constructor(
    private readonly root: string,
    private readonly limits: ExtractLimits,
    /**
     * What becomes of a link, a device or a FIFO: `refuse` rejects the archive (a crate,
     * whose whole tree is installed); `skip` reads past it, never written, its path still
     * checked (a prebuilt binary's archive, of which one regular file is taken).
     */
    private readonly otherKinds: OtherKinds = 'refuse',
  ) {
    this.tree = new TreeIndex(root);
  }

  /**
   * Anything but a regular file or a directory. `skippable`: the entry has no data but its
   * body (a link, a device, a FIFO), so a reader can read past it; anything else (a sparse
   * file, a volume label, an unknown type) is refused whatever `otherKinds` says.
   */
  otherKind(path: string, what: string, skippable: boolean): void {
    if (this.otherKinds === 'refuse' || !skippable) {
      throw new PolicyViolation('entry-type', path, `it is ${what}; only regular files and directories are allowed`);
    }
    entryComponents(path, false, this.root, this.limits);
  }

  /** A directory entry: the directories to create, parents first, itself last (none for the root itself). */
  directory(path: string): string[] {
    const dirs = this.tree.addDir(entryComponents(path, true, this.root, this.limits), path);
    for (let i = 0; i < dirs.length; i++) this.countEntry(path);
    return dirs;
  }

  /**
   * A regular file of `size` bytes: where it goes, or undefined for an entry that is
   * read past and never written (cargo's own `.cargo-ok` marker at a crate's root).
   */
  file(path: string, size: number): PlacedFile | undefined {
    const comps = entryComponents(path, false, this.root, this.limits);
    if (comps.length === 0) throw new PolicyViolation('root', path, 'it is a file in place of the root directory');
    this.totalBytes += size;
    if (this.totalBytes > this.limits.maxTotalBytes) {
      throw new PolicyViolation('total-size', path, `the unpacked files would exceed ${formatBytes(this.limits.maxTotalBytes)}`);
    }
    this.countEntry(path);
    // cargo's own "unpacked completely" marker: never trusted from an archive.
    if (this.root !== '' && comps.length === 1 && comps[0] === '.cargo-ok') return undefined;
    this.files++;
    // One string per file, shared by the tree index and the content hash's path list.
    const rel = comps.join('/');
    const dirs = this.tree.addFile(comps, path, rel);
    for (let i = 0; i < dirs.length; i++) this.countEntry(path);
    return { rel, dirs };
  }

  /**
   * Files and directories (implicit ones too: one deep path can create 64 of them)
   * count towards the entry cap, so inodes are bounded as well as bytes.
   */
  private countEntry(path: string): void {
    if (++this.entries > this.limits.maxEntries) {
      throw new PolicyViolation('entry-count', path, `the archive would create more than ${this.limits.maxEntries} files and directories`);
    }
  }
}

const MiB = 1024 * 1024;

function formatBytes(n: number): string {
  return n >= MiB ? `${Math.round((n / MiB) * 10) / 10} MiB` : `${n} bytes`;
}
