import { defineCommand } from '../../cli/command.js';

export default defineCommand({
  summary: 'Empty the shared download cache.',
  description:
    "Removes every cached download from YEP_EXT_CACHE_DIR (else ~/.cache/yep-ext): only the cache's own files; anything else found there is listed as foreign and left alone. Installed extensions are not touched; the next install downloads again. See docs/fleet.md.",
  examples: ['<%= config.bin %> cache clean', '<%= config.bin %> cache clean --json'],
  async run(io) {
    const [{ cleanCache }, { logForeign }] = await Promise.all([import('../../core/cache/download-cache.js'), import('../../cli/render-cache.js')]);
    const r = await cleanCache(io.context());
    if (!io.json) {
      io.log(`Removed ${r.removed} entr${r.removed === 1 ? 'y' : 'ies'} from ${r.dir}.`);
      logForeign(io.logToStderr, r.foreign);
    }
    return r;
  },
});
