/**
 * The spec a person types to install another version line of an installed crate
 * (the hint of `outdated` and `update` when a newer version is outside the recorded
 * requirement). One builder for both, so both name the crate that is installed: the
 * short name only when the crate is `yolop-extension-<name>` of that very extension,
 * else `crates.io:<crate>` (an extension installed as `crates.io:some-crate` is not
 * `yolop-extension-<its name>`). Pure.
 */
import { CRATE_PREFIX } from '../package/names.js';
import { parseCargoVersion } from './crates-io/cargo-version.js';

/** `hello@^0.4.0`, `crates.io:some-crate@2`: `requirement` appended to the crate's install spelling. */
export function crateInstallSpec(name: string, crate: string, requirement: string): string {
  const short = crate.startsWith(CRATE_PREFIX) && crate.slice(CRATE_PREFIX.length) === name ? name : `crates.io:${crate}`;
  return `${short}@${requirement}`;
}

/**
 * The requirement that takes `version`'s line and follows it: `^0.4` for 0.4.x, `^2` for
 * 2.x (cargo's caret rule), written with its caret so nobody reads `@0.4` as "exactly".
 */
export function requirementFor(version: string): string {
  const v = parseCargoVersion(version);
  if (!v) return `=${version}`;
  if (v.major > 0n) return `^${v.major}`;
  if (v.minor > 0n) return `^0.${v.minor}`;
  return `^0.0.${v.patch}`;
}
