import { defineCommand } from '../../cli/command.js';

export default defineCommand({
  summary: 'Empty the shared download cache.',
  description:
    'Removes every cached download from YEP_EXT_CACHE_DIR (else ~/.cache/yep-ext). Installed extensions are not touched; the next install downloads again. See docs/fleet.md.',
  examples: ['<%= config.bin %> cache clean', '<%= config.bin %> cache clean --json'],
  async run(io) {
    const { cleanCache } = await import('../../core/cache/download-cache.js');
    const r = await cleanCache(io.context());
    if (!io.json) io.log(`Removed ${r.removed} entr${r.removed === 1 ? 'y' : 'ies'} from ${r.dir}.`);
    return r;
  },
});
