/** Extension packages on disk for doctor tests: plugin.json + bin/<command> running a fixture server. */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const SERVER_FIXTURES = resolve(import.meta.dirname, '../fixtures/servers');

export interface PackageOptions {
  /** sh fixture under test/fixtures/servers (default good.sh); bin/<name> runs it from there with /bin/sh. */
  server?: string;
  args?: string[];
  /** Merged into the `yolop` block. */
  yolop?: Record<string, unknown>;
  /** Replaces the command (bin/<name> is still written). */
  command?: string;
}

/** `s` as one sh word. */
const shellQuote = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/** Write a package at <root>/<name> and return its directory. */
export function makePackage(root: string, name: string, options: PackageOptions = {}): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'bin'), { recursive: true });
  const fixture = join(SERVER_FIXTURES, options.server ?? 'good.sh');
  // The fixture runs from where it is (an sh fixture sources its siblings), under the pid the
  // CLI started (exec); an absolute interpreter keeps PATH lookups out of the timing; the
  // fixture gets the manifest args.
  writeFileSync(join(dir, 'bin', name), `#!/bin/sh\nexec /bin/sh ${shellQuote(fixture)} "$@"\n`);
  chmodSync(join(dir, 'bin', name), 0o755);
  const manifest = {
    name,
    version: '0.1.0',
    description: `test package ${name}`,
    yolop: {
      protocol_version: '1.0',
      capabilityServer: { command: options.command ?? name, args: options.args ?? [] },
      tools: [{ name: 'echo', description: 'Echo text back', schema: { type: 'object', properties: { text: { type: 'string' } } } }],
      ...options.yolop,
    },
  };
  writeFileSync(join(dir, 'plugin.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return dir;
}
