/**
 * The real builds (tsc --strict) of generated TypeScript packages, one tsc process for the
 * whole run: every package a test builds for real is generated here, by the arguments its
 * test generates it with (REAL_BUILDS), and built by one `tsc --build` the first time any
 * file asks for one (a tsc process reads the standard library and @types/node first, most of
 * its work, so one for all costs little more than one for each). The files asking run in
 * different workers, maybe at once: the first one to make the shared directory builds, the
 * others wait for its result. The run's scratch directory (test/global-scratch.ts) holds it,
 * so no run reads another's packages; tsc's answer for sources it built before comes from the
 * suite's cache (./ts-build-cache.ts).
 *
 * A test gets the build of its own package: the shared package's sources must equal its own
 * byte for byte (so tsc's answer is its package's), and the dist/ tsc wrote is copied in.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runNew } from '../../src/scaffold/run-new.js';
import type { ScaffoldInput } from '../../src/scaffold/request.js';
import { makeTempHome, runCli } from './home.js';
import { type BuildResult, cachedTypescriptBuild, sourceFiles } from './ts-build-cache.js';

/** `yep-ext new --tool ... --config ...` with every facet (test/cli/new.test.ts). */
export const NEW_FULL_FLAGS = [
  '--tool',
  'search',
  '--tool',
  'fetch-page',
  '--hook',
  'pre_tool_use',
  '--hook',
  'post_tool_use:git_*',
  '--command',
  'deploy',
  '--prompt',
  'Use "search" first.\nÜñï 😀',
  '--dynamic-prompt',
  '--status',
  '--skills',
  '--config',
  'endpoint',
  '--config',
  'token:secret:env=FULL_TOKEN',
  '--config',
  'region:env=FULL_REGION',
];

/** Quotes, backslashes, newlines, tabs, Latin-1, CJK and an astral character: the literal encoders must carry them all. */
const NASTY_PROMPT = 'Say "hi" \\ don\'t\n\tÜñï 中文 😀 ${x} %s {} #{y}';

/** runNew's input with every facet (test/integration/scaffold-servers.test.ts). */
export const SCAFFOLD_FULL: Omit<ScaffoldInput, 'name' | 'language'> = {
  tools: ['search', 'fetch-page'],
  hooks: ['pre_tool_use', 'post_tool_use:git_*'],
  commands: ['deploy'],
  prompt: NASTY_PROMPT,
  dynamicPrompt: true,
  status: true,
  skills: true,
  config: ['endpoint:env=FULL_ENDPOINT', 'token:secret'],
};

/** How a test generates its package: `yep-ext new NAME ...flags`, or runNew with this input. */
type Recipe = { flags: string[] } | { input: Omit<ScaffoldInput, 'name'> };

/** Every package a test builds for real, by name. */
const REAL_BUILDS: Record<string, Recipe> = {
  'x-every': { flags: NEW_FULL_FLAGS },
  weather: { flags: [] },
  'ts-build-full': { input: { language: 'typescript', ...SCAFFOLD_FULL } },
  'ts-build-bare': { input: { language: 'ts', status: true } },
};

/** What the building file writes for the others: tsc's result, or why there is none. */
type Shared = BuildResult | { error: string };

/** How long a file waits for another's build: its generating and one tsc run on a loaded machine. */
const WAIT_MS = 240_000;

function sharedDir(): string {
  const scratch = process.env.YEP_EXT_SUITE_SCRATCH;
  if (!scratch || !existsSync(scratch)) throw new Error('YEP_EXT_SUITE_SCRATCH is not set: the suite runs with test/global-scratch.ts as a globalSetup');
  return join(scratch, 'ts-builds');
}

/** Generate every package of REAL_BUILDS under `work` and build them with one tsc. */
async function buildAll(work: string): Promise<BuildResult> {
  const home = makeTempHome('yep-ts-builds-');
  try {
    for (const [name, recipe] of Object.entries(REAL_BUILDS)) {
      if ('input' in recipe) await runNew({ name, ...recipe.input }, { cwd: work });
      else {
        const r = await runCli(['new', name, ...recipe.flags], { env: home.env, cwd: work });
        if (r.code !== 0) throw new Error(`yep-ext new ${name} exited ${r.code}: ${r.stderr}`);
      }
    }
  } finally {
    home.cleanup();
  }
  // One tsc for all, or its result for these very sources from an earlier run (./ts-build-cache.ts).
  return cachedTypescriptBuild(Object.keys(REAL_BUILDS).map((name) => join(work, name)));
}

/** Build (the first caller of the run) or wait for the build of another file. */
async function sharedBuild(dir: string): Promise<BuildResult> {
  const resultFile = join(dir, 'result.json');
  let builder = true;
  try {
    mkdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    builder = false;
  }
  if (builder) {
    const work = join(dir, 'work');
    mkdirSync(work);
    const shared: Shared = await buildAll(work).catch((e: unknown) => ({ error: e instanceof Error ? (e.stack ?? e.message) : String(e) }));
    writeFileSync(`${resultFile}.tmp`, JSON.stringify(shared));
    renameSync(`${resultFile}.tmp`, resultFile);
  }
  const deadline = Date.now() + WAIT_MS;
  while (!existsSync(resultFile)) {
    if (Date.now() > deadline) throw new Error(`no shared TypeScript build in ${dir} after ${WAIT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const shared = JSON.parse(readFileSync(resultFile, 'utf8')) as Shared;
  if ('error' in shared) throw new Error(`the shared TypeScript build failed: ${shared.error}`);
  return shared;
}

/** Every file of a generated package but what the build and the toolchain link add, by path. */
const sources = (dir: string): Record<string, string> => Object.fromEntries(sourceFiles(dir));

/**
 * The real build of the package `name` a test generated in `dir`: the run's shared build of an
 * identical package (every source byte-equal, so tsc's answer is this package's), its dist/
 * copied in. Returns tsc's status and output for all the packages (empty when all are clean).
 */
export async function realTypescriptBuild(name: string, dir: string): Promise<BuildResult> {
  expect(Object.keys(REAL_BUILDS), 'a package the suite builds for real').toContain(name);
  const shared = sharedDir();
  const result = await sharedBuild(shared);
  const built = join(shared, 'work', name);
  expect(sources(dir)).toEqual(sources(built));
  if (existsSync(join(built, 'dist'))) cpSync(join(built, 'dist'), join(dir, 'dist'), { recursive: true });
  return result;
}
