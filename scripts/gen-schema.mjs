#!/usr/bin/env node
// Writes the generated schema artifacts from the built dist/ (which `npm run build`
// produces; `npm run schema` rebuilds first):
//   schema/yep/v1/{meta,schema}.json   from the protocol types (src/core/yep/protocol.ts);
//   schema/plugin/v1.json and src/core/package/plugin-check.generated.ts
//                                      from the manifest schemas (scripts/plugin-schema.mjs).
// `--check` writes nothing and exits 1 when a committed file is missing or stale.
// After writing the generated check, `npm run build` again to bundle it.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPluginArtifacts } from './plugin-schema.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { buildArtifacts, SCHEMA_DIR } = await import(join(root, 'dist/core/yep/schema-gen.js'));
const check = process.argv.includes('--check');
const files = {
  ...Object.fromEntries(Object.entries(buildArtifacts()).map(([file, text]) => [`${SCHEMA_DIR}/${file}`, text])),
  ...(await buildPluginArtifacts(root)),
};
let stale = 0;
for (const [file, text] of Object.entries(files)) {
  const target = join(root, file);
  let current;
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === text) continue;
  if (check) {
    stale++;
    process.stderr.write(`${file} is ${current === undefined ? 'missing' : 'stale'}\n`);
  } else {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
    process.stdout.write(`wrote ${file}\n`);
  }
}
if (stale > 0) {
  process.stderr.write('Run `npm run schema` (then `npm run build`) and commit the result.\n');
  process.exit(1);
}
if (check) process.stdout.write(`${Object.keys(files).join(', ')}: up to date\n`);
