#!/usr/bin/env node
// Production entry point. `--version` is answered before oclif loads: it is the
// command CI scripts call most and loading the framework costs ~70 ms.
import { readFileSync } from 'node:fs';

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`yep-ext/${pkg.version} ${process.platform}-${process.arch} node-${process.version}\n`);
} else {
  const { execute } = await import('@oclif/core');
  await execute({ dir: import.meta.url });
}
