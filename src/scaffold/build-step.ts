/**
 * The build a generated package needs before yolop can run it: the one command and
 * what it needs (a toolchain, a download). `new` prints both, the README repeats
 * them, and doctor names the command when the server is not built yet.
 */
import { rustBuildStep } from './rust.js';
import type { ScaffoldSpec } from './request.js';
import { TYPESCRIPT_BUILD_STEP } from './typescript.js';

/** What building a package takes: the command (run in the package directory) and what it needs. */
export interface BuildStep {
  command: string;
  needs: string;
}

/** The build a language needs before install/doctor, if any (python needs none). */
export function buildStep(spec: ScaffoldSpec): BuildStep | undefined {
  if (spec.language === 'rust') {
    return {
      command: rustBuildStep(spec.name),
      needs:
        'cargo, and the serde_json crate: the first build downloads it from crates.io. Offline, have it in the cargo cache first (`cargo fetch` where there is a network) or use a local registry (Debian: librust-serde-json-dev, with crates.io replaced by /usr/share/cargo/registry in .cargo/config.toml).',
    };
  }
  if (spec.language === 'typescript') {
    return {
      command: TYPESCRIPT_BUILD_STEP,
      needs: "Node.js 20+ and npm: `npm install` fetches TypeScript and Node's type definitions (dev dependencies only) from the npm registry once.",
    };
  }
  return undefined;
}
