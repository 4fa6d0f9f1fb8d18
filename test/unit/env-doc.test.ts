/**
 * Every environment variable yep-ext's code names is documented, and none is a
 * test switch: a YEP_EXT_* name in src/ must appear in the
 * "Environment variables" section of docs/configuration.md (which the root help
 * points to: test/cli/help.test.ts), and no YEP_EXT_TEST_* name (nor the old
 * keychain-module switch) is left in src/.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/home.js';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    return d.isDirectory() ? sourceFiles(p) : [p];
  });
}

const SRC = join(REPO_ROOT, 'src');
const files = sourceFiles(SRC).map((file) => ({ file: file.slice(REPO_ROOT.length + 1), text: readFileSync(file, 'utf8') }));
const doc = readFileSync(join(REPO_ROOT, 'docs', 'configuration.md'), 'utf8');
const section = doc.slice(doc.indexOf('\n## Environment variables'));

/** name -> first file naming it. */
function namesInSrc(re: RegExp): Map<string, string> {
  const out = new Map<string, string>();
  for (const { file, text } of files) for (const m of text.matchAll(re)) if (!out.has(m[0])) out.set(m[0], file);
  return out;
}

describe('environment variables', () => {
  it('the doc has its section', () => {
    expect(doc).toContain('\n## Environment variables');
  });

  it('every YEP_EXT_* name in src/ is in docs/configuration.md', () => {
    const names = namesInSrc(/YEP_EXT_[A-Z0-9_]*[A-Z0-9]/g);
    expect(names.size).toBeGreaterThan(10);
    const missing = [...names].filter(([name]) => !new RegExp(`\`${name}\``).test(section)).map(([name, file]) => `${name} (${file})`);
    expect(missing).toEqual([]);
  });

  it('src/ holds no test switch', () => {
    const found = [...namesInSrc(/YEP_EXT_TEST\w*|YEP_EXT_KEYCHAIN_MODULE/g)].map(([name, file]) => `${name} (${file})`);
    expect(found).toEqual([]);
  });
});
