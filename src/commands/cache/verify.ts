import { BaseCommand } from '../../cli/base-command.js';
import { verifyCache } from '../../core/cache/download-cache.js';
import { logForeign } from '../../cli/render-cache.js';

export default class CacheVerify extends BaseCommand {
  static override summary = 'Re-hash every entry of the shared download cache, dropping corrupted ones.';
  static override description =
    'The cache is at YEP_EXT_CACHE_DIR, else the platform cache directory (~/.cache/yep-ext). A corrupted entry is also caught when it is read (and downloaded again); this checks them all now. A file in the cache that is not one of its own (a symlink, a stray Thumbs.db) is listed as foreign and left alone. See docs/fleet.md.';
  static override examples = ['<%= config.bin %> cache verify', '<%= config.bin %> cache verify --json'];

  async run(): Promise<unknown> {
    await this.parse(CacheVerify);
    const r = await verifyCache(this.makeContext());
    // Every index entry verify dropped is said: corrupted content, and content that was gone (its entry is dropped too).
    if (!this.jsonEnabled()) {
      this.log(
        `${r.dir}: ${r.verified} entr${r.verified === 1 ? 'y' : 'ies'} verified, ${r.bad} corrupted, ${r.missing} with ${r.missing === 1 ? 'its' : 'their'} content missing (dropped), ${r.reclaimed} reclaimed, ${r.bytes} bytes kept.`,
      );
      logForeign((line) => this.logToStderr(line), r.foreign);
    }
    return r;
  }
}
