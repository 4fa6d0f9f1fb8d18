#!/usr/bin/env node
// Writes schema/yep/v1/{meta,schema}.json from the protocol types (via the built
// dist/, which `npm run build` produces; `npm run schema` compiles first).
// `--check` writes nothing and exits 1 when a committed file is missing or stale.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { buildArtifacts, SCHEMA_DIR } = await import(join(root, 'dist/core/yep/schema-gen.js'));
const check = process.argv.includes('--check');
const dir = join(root, SCHEMA_DIR);
let stale = 0;
for (const [file, text] of Object.entries(buildArtifacts())) {
  const target = join(dir, file);
  let current;
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === text) continue;
  if (check) {
    stale++;
    process.stderr.write(`${SCHEMA_DIR}/${file} is ${current === undefined ? 'missing' : 'stale'}\n`);
  } else {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
    process.stdout.write(`wrote ${SCHEMA_DIR}/${file}\n`);
  }
}
if (stale > 0) {
  process.stderr.write('Run `npm run schema` and commit the result.\n');
  process.exit(1);
}
if (check) process.stdout.write(`${SCHEMA_DIR} is up to date\n`);
