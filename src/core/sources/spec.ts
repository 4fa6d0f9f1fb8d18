/**
 * parseSpec: the one pure, total parser from what a user typed to what to fetch
 * (the npm-package-arg pattern). Host grammar (host-compat §3) with its flaws fixed:
 * - a bare word that is a valid crate name is always a crate, even when a same-named
 *   directory exists (npm reads a bare name as a registry name too); paths are explicit
 *   (`./x`, `../x`, `/x`, `~/x`, `.`), or a word no crate name or git URL can be: one
 *   ending in `/` (what shell completion types: `my-ext/`), or one that names a
 *   directory holding plugin.json here (`examples/echo-node`), as npm reads a spec
 *   with a slash as a folder;
 * - crate versions accept cargo requirement syntax (resolution lives in the crates source);
 * - git refs may contain `/` through the `#ref` form (`url#feature/x`), as npm does.
 */
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { CRATE_PREFIX } from '../package/names.js';
import { sanitize } from '../text/sanitize.js';
import { hasUrlCredential } from '../text/redact.js';
import { gitRefProblem, gitUrlProblem } from './git-url.js';

export interface CrateSpec {
  kind: 'crate';
  raw: string;
  /** Crate name as typed (or expanded from the bare shorthand). */
  crate: string;
  /** Version or cargo requirement text as typed; undefined = latest stable. */
  requirement?: string;
}

export interface GitSpec {
  kind: 'git';
  raw: string;
  /** Clone URL without the ref part. */
  url: string;
  /** Tag, branch or commit the user asked for; undefined = the default branch. */
  ref?: string;
}

export interface PathSpec {
  kind: 'path';
  raw: string;
  /** Absolute (not yet canonical) path. */
  path: string;
}

interface InvalidSpec {
  kind: 'invalid';
  raw: string;
  reason: string;
}

export type Spec = CrateSpec | GitSpec | PathSpec | InvalidSpec;

/** Trim U+0020 only (String#trim would also drop tabs, no-break spaces and BOMs). */
const trimSpaces = (s: string): string => s.replace(/^ +| +$/g, '');

const CRATE_NAME_RE = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

function isExplicitPath(text: string): boolean {
  return (
    text === '.' ||
    text === '..' ||
    text === '~' ||
    text.startsWith('./') ||
    text.startsWith('../') ||
    text.startsWith('/') ||
    text.startsWith('~/') ||
    text.startsWith('.\\') ||
    text.startsWith('..\\') ||
    /^[A-Za-z]:[\\/]/.test(text) ||
    (isAbsolute(text) && !text.includes('://'))
  );
}

function parseCrate(raw: string, body: string, expandShorthand: boolean): Spec {
  const at = body.indexOf('@');
  const name = at === -1 ? body : body.slice(0, at);
  const requirement = at === -1 ? undefined : trimSpaces(body.slice(at + 1));
  if (!CRATE_NAME_RE.test(name)) {
    // Not quoted when it is a piece of a URL credential (`user:TOKEN@host:path`): a piece the redaction no longer sees whole.
    const shown = hasUrlCredential(raw) ? 'it' : JSON.stringify(name);
    return { kind: 'invalid', raw, reason: `${shown} is not a valid crate or extension name` };
  }
  if (requirement !== undefined && requirement === '') {
    return { kind: 'invalid', raw, reason: 'nothing after "@": give a version (1.2.3) or a requirement (^1.2)' };
  }
  const crate = expandShorthand && !name.startsWith(CRATE_PREFIX) ? `${CRATE_PREFIX}${name}` : name;
  return { kind: 'crate', raw, crate, ...(requirement !== undefined ? { requirement } : {}) };
}

function parseGit(raw: string, text: string): Spec {
  let url = text;
  let ref: string | undefined;
  const hash = text.indexOf('#');
  if (hash !== -1) {
    url = text.slice(0, hash);
    ref = text.slice(hash + 1);
    if (ref === '') return { kind: 'invalid', raw, reason: 'nothing after "#": give a branch, tag or commit' };
  } else {
    // Host rule: the part after the last `@` is a rev only when it has no `/` and no `:`.
    const at = text.lastIndexOf('@');
    if (at > 0) {
      const candidate = text.slice(at + 1);
      if (candidate !== '' && !candidate.includes('/') && !candidate.includes(':')) {
        url = text.slice(0, at);
        ref = candidate;
      }
    }
  }
  // Validate here too, so a hostile URL or ref is refused before anything is planned
  // (the git source validates again: library callers may skip parseSpec).
  const urlProblem = gitUrlProblem(url);
  if (urlProblem) return { kind: 'invalid', raw, reason: urlProblem };
  const refProblem = ref === undefined ? undefined : gitRefProblem(ref);
  if (refProblem) return { kind: 'invalid', raw, reason: `the git ref ${JSON.stringify(sanitize(ref ?? '', { max: 200 }))} ${refProblem}` };
  return { kind: 'git', raw, url, ...(ref !== undefined ? { ref } : {}) };
}

/**
 * Parse spec text. `cwd` and `home` resolve relative and `~` paths; the only file
 * read is a plugin.json's existence, for a word that is no crate name. Never throws:
 * bad text yields `{kind: "invalid", reason}`.
 */
export function parseSpec(input: string, cwd: string = process.cwd(), home: string = homedir()): Spec {
  const raw = input;
  // Control characters are refused before any trimming (a trailing tab is not
  // whitespace to drop but a character cargo refuses), and only plain spaces
  // (U+0020) are trimmed: cargo's grammar allows no other whitespace either.
  if (/[\x00-\x1f\x7f]/.test(input)) return { kind: 'invalid', raw, reason: 'the source contains control characters' };
  const text = trimSpaces(input);
  if (text === '') return { kind: 'invalid', raw, reason: 'empty source' };
  if (text.startsWith('crates.io:')) return parseCrate(raw, text.slice('crates.io:'.length), false);
  if (text.startsWith('git+')) return parseGit(raw, text.slice(4));
  if (text.includes('://') || text.startsWith('git@')) return parseGit(raw, text);
  if (isExplicitPath(text)) {
    const expanded = text === '~' ? home : text.startsWith('~/') ? resolve(home, text.slice(2)) : resolve(cwd, text);
    return { kind: 'path', raw, path: expanded };
  }
  if (text.startsWith('-')) return { kind: 'invalid', raw, reason: 'a source cannot start with "-"' };
  // No crate name holds a `/` and a git URL has `://` or `git@`: a word ending in `/` is a directory.
  if (text.endsWith('/')) return { kind: 'path', raw, path: resolve(cwd, text) };
  const crate = parseCrate(raw, text, true);
  // Not a crate name, and a package directory here: the directory, not an error telling to write ./ before it.
  if (crate.kind === 'invalid' && holdsManifest(resolve(cwd, text))) return { kind: 'path', raw, path: resolve(cwd, text) };
  return crate;
}

/** Whether `dir` holds a plugin.json file (what makes a directory a package). */
export function holdsManifest(dir: string): boolean {
  try {
    return statSync(join(dir, 'plugin.json')).isFile();
  } catch {
    return false;
  }
}

/** Short human label for a spec (used in progress lines and errors). */
export function describeSpec(spec: Spec): string {
  switch (spec.kind) {
    case 'crate':
      return `crates.io:${spec.crate}${spec.requirement ? `@${spec.requirement}` : ''}`;
    case 'git':
      return `${spec.url}${spec.ref ? `#${spec.ref}` : ''}`;
    case 'path':
      return spec.path;
    case 'invalid':
      return spec.raw;
  }
}

/** A short, path-free label for a spec's staging directory name. */
export function stageLabel(spec: Spec): string {
  return spec.kind === 'path' ? 'path' : describeSpec(spec);
}
