/**
 * Tests that need something from the machine (root and tmpfs, cargo and Debian's
 * serde_json, util-linux `script`, a supported platform) declare it here instead of
 * `skipIf`, so no test can hide a skip:
 * - when the need is met, the suite or test runs as written;
 * - when it is not and `YEP_EXT_REQUIRE_ALL=1` (CI sets it after installing what
 *   the suite needs), the suite or test FAILS, its error naming what is missing and
 *   how to get it;
 * - otherwise (a developer's machine) it is skipped with the reason in its title,
 *   and the summary line counts it as skipped.
 */
import { beforeAll, describe, it } from 'vitest';

export interface Need {
  ok: boolean;
  /** What is missing and how to get it, e.g. "`script` (Debian package util-linux)". */
  missing: string;
}

const REQUIRE_ALL = process.env.YEP_EXT_REQUIRE_ALL === '1';

export const need = (ok: boolean, missing: string): Need => ({ ok, missing });

const failure = (n: Need): Error => new Error(`YEP_EXT_REQUIRE_ALL=1 and this needs ${n.missing}: not available on this machine`);

/** `describe`, but for a suite that needs `n`. */
export function describeNeeding(n: Need, name: string, body: () => void): void {
  if (n.ok) describe(name, body);
  else if (REQUIRE_ALL)
    describe(name, () => {
      // First hook of the suite: it throws before any other hook or test runs, so
      // every test below is reported as not run under a failed hook (a failure).
      beforeAll(() => {
        throw failure(n);
      });
      body();
    });
  else describe.skip(`${name} [SKIPPED: needs ${n.missing}]`, body);
}

/** `it`, but for a test that needs `n`. */
export function itNeeding(n: Need, name: string, fn: () => unknown, timeout?: number): void {
  if (n.ok) it(name, fn, timeout);
  else if (REQUIRE_ALL)
    it(name, () => {
      throw failure(n);
    });
  else it.skip(`${name} [SKIPPED: needs ${n.missing}]`, fn);
}
