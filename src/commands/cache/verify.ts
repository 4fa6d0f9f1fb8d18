import { defineCommand } from '../../cli/command.js';

export default defineCommand({
  summary: 'Re-hash the download cache, dropping corrupted entries.',
  description:
    'The cache is at YEP_EXT_CACHE_DIR, else the platform cache directory (~/.cache/yep-ext). A corrupted entry is also caught when it is read (and downloaded again); this checks them all now. A file in the cache that is not one of its own (a symlink, a stray Thumbs.db) is listed as foreign and left alone. See docs/fleet.md.',
  examples: ['<%= config.bin %> cache verify', '<%= config.bin %> cache verify --json'],
  async run(io) {
    const [{ verifyCache }, { logForeign }] = await Promise.all([import('../../core/cache/download-cache.js'), import('../../cli/render-cache.js')]);
    const r = await verifyCache(io.context());
    // Every index entry verify dropped is said: corrupted content, and content that was gone (its entry is dropped too).
    if (!io.json) {
      io.log(
        `${r.dir}: ${r.verified} entr${r.verified === 1 ? 'y' : 'ies'} verified, ${r.bad} corrupted, ${r.missing} with ${r.missing === 1 ? 'its' : 'their'} content missing (dropped), ${r.reclaimed} reclaimed, ${r.bytes} bytes kept.`,
      );
      logForeign(io.logToStderr, r.foreign);
    }
    return r;
  },
});
