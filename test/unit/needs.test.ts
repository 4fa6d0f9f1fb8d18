/**
 * No silent skips: a test that needs something the machine lacks is skipped, its
 * title saying what is missing, on a developer's machine, and FAILS naming it under
 * YEP_EXT_REQUIRE_ALL=1 (as CI runs). Checked through a child vitest over
 * test/fixtures/needs-suite, read by the summary line CI judges.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/home.js';
import { runFixtureSuite } from '../helpers/vitest-child.js';

const CONFIG = 'test/fixtures/needs-suite/vitest.config.ts';

describe('tests that need something from the machine', () => {
  it('are skipped with the reason in their title when YEP_EXT_REQUIRE_ALL is unset', async () => {
    const { code, lines } = await runFixtureSuite(CONFIG, ['--reporter=verbose', `--reporter=${join(REPO_ROOT, 'test/summary-reporter.ts')}`]);
    expect(code, lines.join('\n')).toBe(0);
    expect(lines.at(-1)).toBe('1 passed, 0 failed, 3 skipped');
    const text = lines.join('\n');
    expect(text).toContain('a suite needing a unicorn [SKIPPED: needs a unicorn (Debian package unicorn)]');
    expect(text).toContain('a test needing a dragon [SKIPPED: needs a dragon (https://example.invalid/dragon)]');
  });

  it('fail, naming what is missing, under YEP_EXT_REQUIRE_ALL=1', async () => {
    const { code, lines, stderr } = await runFixtureSuite(CONFIG, [], { YEP_EXT_REQUIRE_ALL: '1' });
    expect(code).toBe(1);
    // The suite's two tests never run under its failed hook, the hook fails, the single test fails.
    expect(lines.at(-1)).toBe('1 passed, 4 failed, 0 skipped');
    const text = lines.join('\n') + stderr;
    expect(text).toContain('YEP_EXT_REQUIRE_ALL=1 and this needs a unicorn (Debian package unicorn): not available on this machine');
    expect(text).toContain('YEP_EXT_REQUIRE_ALL=1 and this needs a dragon (https://example.invalid/dragon): not available on this machine');
    expect(text).not.toContain('[SKIPPED');
  });
});
