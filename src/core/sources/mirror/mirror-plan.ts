/**
 * A mirror run in two phases: every lock entry is fetched and checked first (into a
 * scratch directory, nothing written into the mirror), and only when every entry
 * passed is anything placed. So a refusal part-way (an index line that names another
 * crate, a checksum that does not match, a tampered file already in the mirror)
 * leaves the mirror exactly as it was, and a new mirror not created at all.
 *
 * It is also the mirror's custody (fs/custody.ts): a file is written only where
 * nothing is, where the same bytes are, or where a file this mirror wrote before is
 * (named in its `mirror.json`, or in the journal of a run that did not finish) and
 * still holds the bytes yep-ext recorded writing; a directory on the way must be a
 * real directory. A file of yep-ext's that the user edited since is replaced only
 * with `--force`; a file yep-ext did not write is never replaced or deleted, even
 * with `--force`.
 */
import { lstatSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { YepError } from '../../errors.js';
import { ANY_NAME, checkCustody, makeOwnedDir, type Custody } from '../../fs/custody.js';
import { writeFileAtomic } from '../../fs/fs-atomic.js';
import { checkpoint, type CheckpointHost } from '../../fs/checkpoint.js';
import { sanitize } from '../../text/sanitize.js';
import { copyPinnedFile, readMirrorFile } from './mirror-tree.js';
import { sha256Hex } from '../../fs/hash.js';

/** A file an earlier run wrote: the SHA-256 digests its bytes may have (empty: not recorded, an older yep-ext's own file). */
export type WrittenFiles = Readonly<Record<string, readonly string[]>>;

/** What the place phase does for one staged item. */
type Step = () => Promise<void>;

/** The directories of `rel` below the root (`index/yo/lo` of `index/yo/lo/x`). */
function dirsOf(rel: string): string[] {
  return dirname(rel)
    .split('/')
    .filter((p) => p !== '.' && p !== '');
}

export class MirrorPlan {
  /** Files staged by this run (index files, config.json), by path in the mirror: read back before the mirror's own. */
  private readonly staged = new Map<string, Buffer>();
  private readonly steps: Array<{ order: number; run: Step }> = [];
  private readonly claimed = new Set<string>();
  private readonly fileSteps = new Set<string>();

  constructor(
    /** The mirror's root (the directory the user named). */
    readonly root: string,
    /** Scratch space inside the root, removed after the run. */
    readonly scratch: string,
    /** What earlier runs wrote (mirror.json's `files`, an unfinished run's journal): path -> the digests recorded. */
    private readonly written: WrittenFiles,
    /** `mirror.json`'s git repositories (paths). */
    private readonly repos: ReadonlySet<string>,
    /** `--force`: a file of yep-ext's that the user edited may be replaced. */
    private readonly force = false,
  ) {}

  /** Files of yep-ext's that the user had edited and `--force` let this run replace. */
  readonly replacedEdits: string[] = [];

  /** Every file this run will write, path -> sha256 (the journal the place phase writes first). */
  plannedFiles(): Record<string, string> {
    return Object.fromEntries([...this.staged].filter(([rel]) => this.fileSteps.has(rel)).map(([rel, data]) => [rel, sha256Hex(data)]));
  }

  /** The bytes at `rel` as this run will leave them: a staged write, else the mirror's file (undefined: none). */
  read(rel: string, maxBytes?: number): Buffer | undefined {
    return this.staged.get(rel) ?? readMirrorFile(this.root, rel, maxBytes);
  }

  /**
   * The guard of a write at `rel`: each directory on the way is absent or a real
   * directory, and what is at `rel` is nothing, the same bytes (`undefined` returned:
   * nothing to write), or a file this mirror wrote (named in mirror.json). Anything
   * else is refused (E_CONFLICT), whatever `--force` said.
   */
  mayWrite(rel: string, data?: Buffer): 'write' | 'same' {
    this.checkDirsOf(rel);
    const path = join(this.root, rel);
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (st === undefined) return 'write';
    const have = st.isFile() && data !== undefined ? readMirrorFile(this.root, rel) : undefined;
    if (have?.equals(data as Buffer)) return 'same';
    const recorded = this.written[rel];
    if (st.isFile() && recorded !== undefined) {
      // A pinned .crate (no `data`) is checked against its cksum where it is copied (E_INTEGRITY).
      if (have === undefined || recorded.length === 0 || recorded.includes(sha256Hex(have))) return 'write';
      if (this.force) {
        this.replacedEdits.push(rel);
        return 'write';
      }
      throw new YepError(
        'E_CONFLICT',
        `The mirror would replace ${sanitize(path)}, which yep-ext wrote but someone edited since (its bytes are not what mirror.json records). Nothing was written.`,
        {
          hint: 'Keep your edit elsewhere and pass --force to let the mirror write its own version, or build the mirror into a new or empty directory.',
          details: { file: rel, recorded: recorded[recorded.length - 1], got: sha256Hex(have) },
        },
      );
    }
    throw new YepError(
      'E_CONFLICT',
      `The mirror would replace ${sanitize(path)}, which yep-ext did not write (mirror.json does not name it); it is never replaced or deleted. Nothing was written.`,
      {
        hint: 'Move that file aside, or build the mirror into a new or empty directory.',
        details: { file: rel },
      },
    );
  }

  /** The custody guard for the directories on the way to `rel` (each absent or a real directory). */
  checkDirsOf(rel: string): void {
    checkCustody(this.dirsCustody(rel));
  }

  /** Whether the git repository at `rel` is one this mirror made; one it did not make is refused. */
  ownsRepo(rel: string): boolean {
    const st = lstatSync(join(this.root, rel), { throwIfNoEntry: false });
    if (st === undefined) return false;
    if (st.isDirectory() && this.repos.has(rel)) return true;
    throw new YepError(
      'E_CONFLICT',
      `The mirror would write into ${sanitize(join(this.root, rel))}, which yep-ext did not make (mirror.json does not name it). Nothing was written.`,
      { hint: 'Move it aside, or build the mirror into a new or empty directory.', details: { file: rel } },
    );
  }

  /** Stage `data` for `rel` (checked now, written in the place phase). Returns its sha256. */
  stageFile(rel: string, data: Buffer, order = 2): string {
    if (this.mayWrite(rel, data) === 'write' && !this.fileSteps.has(rel)) {
      this.fileSteps.add(rel);
      this.steps.push({
        order,
        run: async () => {
          const bytes = this.staged.get(rel)!;
          await this.makeDirsOf(rel);
          await writeFileAtomic(join(this.root, rel), bytes, { mode: 0o644, what: 'The mirror file' });
        },
      });
    }
    this.staged.set(rel, data);
    return sha256Hex(data);
  }

  /** Stage the copy of a verified download (`source`, in scratch) to `rel`, hashed again while copied. */
  stageCopy(rel: string, source: string, sha256: string, label: string): void {
    this.mayWrite(rel);
    this.steps.push({
      order: 1,
      run: async () => {
        await this.makeDirsOf(rel);
        await copyPinnedFile(this.root, rel, source, sha256, label);
      },
    });
  }

  /** Make the directories of `rel` in the mirror (through the custody guard), for a step of its own. */
  async makeDirsOf(rel: string): Promise<void> {
    await makeOwnedDir(this.dirsCustody(rel));
  }

  private dirsCustody(rel: string): Custody {
    return { base: this.root, owned: dirsOf(rel), names: ANY_NAME, what: 'The mirror directory', shared: true };
  }

  /** Stage a step of its own (a git repository moved or fetched into place), once per `key`. */
  stageStep(key: string, run: Step, order = 1): void {
    if (this.claimed.has(key)) return;
    this.claimed.add(key);
    this.steps.push({ order, run });
  }

  /**
   * The place phase: the .crates and repositories first, then the index files that name
   * them, then (order 3 and up) mirror.json and the completion record. `host`'s pause
   * points (crash tests) sit after the first file and before the records.
   */
  async place(host: CheckpointHost = {}): Promise<void> {
    let placed = 0;
    for (const s of [...this.steps].sort((a, b) => a.order - b.order)) {
      if (s.order >= 3 && placed >= 0) {
        await checkpoint(host, 'mirror:before-record');
        placed = -1;
      }
      await s.run();
      if (placed >= 0 && ++placed === 1) await checkpoint(host, 'mirror:after-first-file');
    }
  }
}
