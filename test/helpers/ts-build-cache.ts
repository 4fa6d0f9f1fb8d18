/**
 * The real TypeScript build of the generated packages (./scaffold.ts buildTypescriptPackages,
 * one tsc --build) kept in the suite's cache (./test-cache.ts) under a key naming everything
 * tsc reads: every source file of every package (what it is generated with decides them), the
 * TypeScript version (its compiler and standard library) and the version of each @types
 * package the toolchain link makes visible. A run whose generated packages are the ones built
 * before gets tsc's status, output and dist/ as tsc gave them; any change to a template, the
 * compiler or a type package is a new key, and tsc runs.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { REPO_ROOT } from './home.js';
import { buildTypescriptPackages } from './scaffold.js';
import { testCacheDir } from './test-cache.js';

/** tsc's exit status and what it printed. */
export interface BuildResult {
  code: number | null;
  output: string;
}

/** A generated package's files by path (sorted), but what the build and the toolchain link add. */
export function sourceFiles(dir: string, sub = ''): [string, string][] {
  const out: [string, string][] = [];
  for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
    const rel = join(sub, entry.name);
    if (['node_modules', 'dist', 'tsconfig.tsbuildinfo'].includes(rel)) continue;
    if (entry.isDirectory()) out.push(...sourceFiles(dir, rel));
    else out.push([rel, readFileSync(join(dir, rel), 'utf8')]);
  }
  return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

const version = (pkgDir: string): string => (JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version;

function buildKey(dirs: string[]): string {
  const hash = createHash('sha256');
  hash.update(`typescript ${version(join(REPO_ROOT, 'node_modules', 'typescript'))}\0`);
  const types = join(REPO_ROOT, 'node_modules', '@types');
  for (const name of readdirSync(types).sort()) hash.update(`@types/${name} ${version(join(types, name))}\0`);
  for (const dir of dirs) {
    hash.update(`package ${basename(dir)}\0`);
    for (const [rel, text] of sourceFiles(dir)) hash.update(`${rel}\0${text}\0`);
  }
  return hash.digest('hex').slice(0, 24);
}

/** buildTypescriptPackages(dirs), or the result and dist/ directories it gave for these very sources before. */
export function cachedTypescriptBuild(dirs: string[]): BuildResult {
  const cached = testCacheDir('ts-builds', buildKey(dirs));
  const resultFile = join(cached, 'result.json');
  if (existsSync(resultFile)) {
    for (const dir of dirs) {
      const dist = join(cached, basename(dir), 'dist');
      if (existsSync(dist)) cpSync(dist, join(dir, 'dist'), { recursive: true });
    }
    return JSON.parse(readFileSync(resultFile, 'utf8')) as BuildResult;
  }
  const result = buildTypescriptPackages(dirs);
  // A failed build is not kept: the next run builds again.
  if (result.code !== 0) return result;
  const staging = `${cached}.${process.pid}-${Date.now()}`;
  for (const dir of dirs) {
    if (existsSync(join(dir, 'dist'))) cpSync(join(dir, 'dist'), join(staging, basename(dir), 'dist'), { recursive: true });
  }
  mkdirSync(staging, { recursive: true });
  writeFileSync(join(staging, 'result.json'), JSON.stringify(result));
  mkdirSync(dirname(cached), { recursive: true });
  try {
    renameSync(staging, cached);
  } catch {
    // Another run kept the same build first.
    rmSync(staging, { recursive: true, force: true });
  }
  return result;
}
