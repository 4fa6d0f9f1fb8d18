/**
 * Test-only pause points for crash tests: when YEP_EXT_TEST_PAUSE_AT names this
 * point, the process writes YEP_EXT_TEST_PAUSE_FILE and waits to be killed.
 * Inert (one env lookup) in normal runs.
 */
import { writeFileSync } from 'node:fs';

export async function checkpoint(env: Record<string, string | undefined>, point: string): Promise<void> {
  if (env.YEP_EXT_TEST_PAUSE_AT !== point) return;
  if (env.YEP_EXT_TEST_PAUSE_FILE) writeFileSync(env.YEP_EXT_TEST_PAUSE_FILE, `${process.pid}\n`);
  await new Promise(() => {
    setInterval(() => {}, 1 << 30);
  });
}
