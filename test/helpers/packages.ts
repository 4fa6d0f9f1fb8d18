/** Build small extension packages in temp dirs for install tests. */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface PackageOptions {
  name: string;
  version?: string;
  yolop?: Record<string, unknown>;
  files?: Record<string, string>;
}

/** A package dir with plugin.json and an executable node server at bin/<name>-server. */
export function writePackage(dir: string, options: PackageOptions): string {
  mkdirSync(join(dir, 'bin'), { recursive: true });
  const command = `${options.name}-server`;
  const manifest = {
    name: options.name,
    version: options.version ?? '0.1.0',
    description: `test extension ${options.name}`,
    yolop: { capabilityServer: { command }, tools: [{ name: `${options.name.replace(/-/g, '_')}_tool` }], ...(options.yolop ?? {}) },
  };
  writeFileSync(join(dir, 'plugin.json'), JSON.stringify(manifest, null, 2));
  writeFileSync(join(dir, 'bin', command), '#!/usr/bin/env node\nprocess.stdin.resume();\n');
  chmodSync(join(dir, 'bin', command), 0o755);
  for (const [rel, content] of Object.entries(options.files ?? {})) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), content);
  }
  return dir;
}
