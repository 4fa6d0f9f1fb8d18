import { BaseCommand } from '../../cli/base-command.js';
import { cleanCache } from '../../core/cache/download-cache.js';
import { logForeign } from '../../cli/render-cache.js';

export default class CacheClean extends BaseCommand {
  static override summary = 'Empty the shared download cache.';
  static override description =
    "Removes every cached download from YEP_EXT_CACHE_DIR (else ~/.cache/yep-ext): only the cache's own files; anything else found there is listed as foreign and left alone. Installed extensions are not touched; the next install downloads again. See docs/fleet.md.";
  static override examples = ['<%= config.bin %> cache clean', '<%= config.bin %> cache clean --json'];

  async run(): Promise<unknown> {
    await this.parse(CacheClean);
    const r = await cleanCache(this.makeContext());
    if (!this.jsonEnabled()) {
      this.log(`Removed ${r.removed} entr${r.removed === 1 ? 'y' : 'ies'} from ${r.dir}.`);
      logForeign((line) => this.logToStderr(line), r.foreign);
    }
    return r;
  }
}
