import { resolve } from 'node:path';
import { indexFlag, timeoutFlag } from '../cli/common-flags.js';
import { defineCommand } from '../cli/command.js';
import { Args, Flags } from '../cli/flags.js';

export default defineCommand({
  summary: 'Write a static mirror of what a lock pins (air-gapped fleets).',
  description: `The directory holds a sparse index (index/) with only the locked versions' lines, copied byte-for-byte from the origin, the .crate files verified against the lock's checksums, git sources as bare repositories holding the locked commits (git/<host>/<path>.git, servable by dumb HTTP), and mirror.json (what it holds and the SHA-256 of every index file and .crate; git objects are named by their own hashes). Serve it with any static file server (nginx, S3, a CDN) or read it in place, then install with --index / YEP_EXT_INDEX pointing at <base-url>/index/ and --git-mirror / YEP_EXT_GIT_MIRROR at <base-url>/git/. Every entry is fetched and verified (its index line must name the locked crate and version, its bytes must hash to the locked checksum) before anything is written: a refusal leaves the directory as it was. The directory is created when missing (its parent must exist, as for \`lock export\`); an existing one must be empty or a mirror yep-ext made (its .yep-mirror record, written last, or the journal of a run that stopped part-way), unless --force, and a file yep-ext did not write is never replaced or deleted; a file it wrote that was edited since is replaced only with --force. Running it again on an updated lock adds what is new; a file already mirrored is never rewritten with other bytes. Path sources are skipped (they are local). A provisioned server binary is not mirrored: an install from the mirror still downloads it from its release host, and each entry that has one is named (not_mirrored in --json). See docs/fleet.md.`,
  examples: [
    '<%= config.bin %> mirror ./mirror --lockfile ./yolop-extensions.lock --base-url https://mirror.internal/yep/',
    'YEP_EXT_INDEX=https://mirror.internal/yep/index/ <%= config.bin %> install --frozen --lockfile ./yolop-extensions.lock',
    '<%= config.bin %> mirror /mnt/share/yep-mirror --json',
    'YEP_EXT_INDEX=file:///mnt/share/yep-mirror/index/ <%= config.bin %> install --frozen',
  ],
  args: { dir: Args.string({ ignoreStdin: true, required: true, description: 'The mirror directory (created if missing; its parent must exist).' }) },
  flags: {
    ...indexFlag,
    lockfile: Flags.string({ description: "The lock to mirror (default: the store's own extensions.lock).", helpValue: '<path>' }),
    'base-url': Flags.string({ description: 'The URL the mirror will be served at (default: the directory as a file:// URL).', helpValue: '<url>' }),
    ...timeoutFlag,
    force: Flags.boolean({
      description:
        'Write into a non-empty directory yep-ext did not make (its files are never replaced or deleted), and over a file of the mirror edited since yep-ext wrote it.',
    }),
  },
  async run(io, { args, flags }) {
    const [{ buildMirror }, { sanitize }] = await Promise.all([import('../core/operations/mirror.js'), import('../core/text/sanitize.js')]);
    const result = await buildMirror(io.context(), resolve(io.io.cwd, args.dir), {
      ...(flags.lockfile ? { lockfile: resolve(io.io.cwd, flags.lockfile) } : {}),
      ...(flags['base-url'] ? { baseUrl: flags['base-url'] } : {}),
      ...(flags.force ? { force: true } : {}),
    });
    if (!io.json) {
      // -q: what was not mirrored (a warning) and the result line only.
      if (!flags.quiet) {
        for (const c of result.crates) io.log(`${c.added ? '+' : '='} ${c.name}: ${c.crate} ${c.version}`);
        for (const g of result.git) io.log(`${g.added ? '+' : '='} ${g.name}: ${g.url} ${g.commit.slice(0, 12)}`);
        for (const s of result.skipped) io.logToStderr(`- ${s.name}: skipped (${s.reason})`);
      }
      for (const n of result.not_mirrored) io.logToStderr(`! ${n.name}: its ${sanitize(n.what)} is not in the mirror: ${n.reason}`);
      io.log(
        `Mirror at ${result.dir}: ${result.crates.length} crate${result.crates.length === 1 ? '' : 's'}, ${result.git.length} git repositor${result.git.length === 1 ? 'y' : 'ies'}. Install from it with YEP_EXT_INDEX=${result.index_url}${result.git.length ? ` YEP_EXT_GIT_MIRROR=${result.git_mirror_url}` : ''}`,
      );
    }
    return result;
  },
});
