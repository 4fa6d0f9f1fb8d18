/**
 * `new`: validate the request, render the package, write it in one step. A
 * refused request (bad name, no contribution, bad flag syntax, target in the
 * way) throws before anything touches the disk.
 */
import { join, relative, resolve, sep } from 'node:path';
import { CRATE_PREFIX } from '../core/package/names.js';
import { parseScaffoldRequest, type Language, type ScaffoldInput, type ScaffoldSpec } from './request.js';
import { serverSourcePath, sourceNames } from './readme.js';
import { declaredHandlers } from './facets.js';
import { buildStep } from './build-step.js';
import { renderScaffold } from './render.js';
import { writeScaffold } from './write.js';
import type { CheckpointHost } from '../core/fs/checkpoint.js';
import { isInside } from '../core/fs/path-inside.js';

export interface NewOptions {
  /** Resolves a relative --dir and is where the printed commands are meant to run. */
  cwd: string;
  /** Parent directory of the package (default cwd). `~/` is expanded with `home`. */
  dir?: string;
  home?: string;
  /** Crash-test pause points (ctx.checkpoint). */
  checkpoint?: CheckpointHost['checkpoint'];
}

export interface NewResult {
  name: string;
  language: Language;
  /** Absolute path of the new package. */
  dir: string;
  /** The package path as the printed commands use it (./name, or absolute outside cwd). */
  path: string;
  /** Every file written, with its mode as octal text. */
  files: { path: string; mode: string }[];
  /** The file holding the handlers to fill in. */
  server: string;
  /** Handler functions generated, in the file's order. */
  handlers: string[];
  /** Run in the package directory before doctor/install, after every change (typescript and rust). */
  build?: string;
  /** What the build needs (a toolchain, a download), said before the author meets it. */
  buildNeeds?: string;
  /** The commands that test and install the package, in order. */
  next: string[];
  /** Things worth telling the author (a normalised name, a derived env name). */
  notes: string[];
  spec: ScaffoldSpec;
}

/** Quote for a POSIX shell only when needed. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_./~:@%+=-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** ./rel inside cwd (a bare word would be read as a crate name), absolute otherwise. */
function displayPath(cwd: string, dir: string): string {
  const rel = relative(cwd, dir);
  if (rel === '' || !isInside(cwd, dir)) return dir;
  return `.${sep}${rel}`;
}

function handlerNames(spec: ScaffoldSpec): string[] {
  const names = sourceNames(spec.language);
  return declaredHandlers(spec).map((f) => names[f]);
}

export async function runNew(input: ScaffoldInput, options: NewOptions): Promise<NewResult> {
  const spec = parseScaffoldRequest(input);
  const parentText = options.dir ?? '.';
  const expanded = options.home && (parentText === '~' || parentText.startsWith('~/')) ? join(options.home, parentText.slice(1)) : parentText;
  const dir = resolve(options.cwd, expanded, spec.name);
  const files = renderScaffold(spec);
  await writeScaffold(dir, files, { ...(options.checkpoint ? { checkpoint: options.checkpoint } : {}) });

  const notes: string[] = [];
  if (input.name.trim() !== spec.name) notes.push(`${CRATE_PREFIX}${spec.name} is the crate spelling: the extension is named ${spec.name}.`);
  if (spec.sampleTool) {
    notes.push(
      `nothing else was asked for, so ${spec.name} serves one sample tool, ${spec.tools[0]}: rename it in plugin.json and ${serverSourcePath(spec)}, or choose the facets with --tool, --hook, --command, --prompt (yep-ext new --help).`,
    );
  }
  for (const f of spec.config) {
    if (f.envDerived) {
      notes.push(
        `secret ${f.key} reaches the server as $${f.env} (yolop hands secrets over only through environment variables; change "env" in plugin.json to rename it).`,
      );
    }
  }
  const path = displayPath(options.cwd, dir);
  const build = buildStep(spec);
  return {
    name: spec.name,
    language: spec.language,
    dir,
    path,
    files: Object.keys(files)
      .sort()
      .map((p) => ({ path: p, mode: `0${files[p]!.mode.toString(8)}` })),
    server: serverSourcePath(spec),
    handlers: handlerNames(spec),
    ...(build ? { build: build.command, buildNeeds: build.needs } : {}),
    next: [
      ...(build ? [`(cd ${shellWord(path)} && ${build.command})`] : []),
      `yep-ext doctor ${shellWord(path)}`,
      `yep-ext install ${shellWord(path)}`,
      `yep-ext enable ${spec.name}`,
    ],
    notes,
    spec,
  };
}
