/**
 * The environment the build-from-source tests hand cargo (through the CLI, which passes
 * cargo's own variables on): the toolchain under the real home, offline, and the release
 * profile without optimisation. A test's build really runs (its build script, rustc, the
 * link), but what it checks never depends on optimised code, and opt-level 0 is most of
 * what rustc then saves.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

export const CARGO_TEST_ENV: Record<string, string> = {
  // The toolchain lives under the real home (rustup); a test's temp HOME must not hide it.
  RUSTUP_HOME: process.env.RUSTUP_HOME ?? join(homedir(), '.rustup'),
  CARGO_HOME: process.env.CARGO_HOME ?? join(homedir(), '.cargo'),
  CARGO_NET_OFFLINE: 'true',
  CARGO_PROFILE_RELEASE_OPT_LEVEL: '0',
};
