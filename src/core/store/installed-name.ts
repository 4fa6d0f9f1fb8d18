/**
 * Which installed extension a user means: the one resolver every command that
 * names an installed extension goes through (enable, disable, remove, info,
 * verify, update, outdated, set-secret, config, install --force's repair).
 *
 * A name: `yolop-extension-lsp` (the crate spelling) means `lsp` -- unless an
 * extension is installed under the exact name typed, which always wins (a
 * manifest may be named `yolop-extension-x`). A source, read by parseSpec as
 * `install` reads it: the extension the lock records as installed from it (`.`
 * inside a path install's directory, its absolute path, `crates.io:<crate>`, a git
 * URL), or a package directory in the store itself. A source nothing is installed
 * from is E_NOT_INSTALLED with the install that would install it.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Context } from '../context.js';
import { YepError } from '../errors.js';
import { assertValidName, isValidName, normalizeExtensionName } from '../package/names.js';
import { homeDir, packageDir, type Paths } from '../paths.js';
import { sourceFor } from '../sources/index.js';
import { canonicalDir } from '../sources/local-path.js';
import { parseSpec, type Spec } from '../sources/spec.js';
import { loadStoreLock, type LockEntry, type Lockfile } from './lockfile.js';

export function resolveExtensionName(paths: Paths, input: string): string {
  const exact = input.trim();
  try {
    assertValidName(exact);
    lstatSync(packageDir(paths, exact));
    return exact;
  } catch {
    return normalizeExtensionName(input);
  }
}

/** What `input` names: an installed extension's name, or (not a name) the source it parses as, which nothing installed comes from. */
export type InstalledLookup = { name: string; spec?: undefined } | { name?: undefined; spec: Spec };

/**
 * `input` read against `lock`: a word that is an extension name is that name (not
 * checked to be installed: each command says "not installed" its own way); anything
 * else is read as a source and matched against what the lock records.
 */
export function lookUpInstalled(ctx: Pick<Context, 'paths' | 'env' | 'cwd'>, lock: Lockfile, input: string, cwd?: string): InstalledLookup {
  const exact = input.trim();
  if (isValidName(exact)) return { name: resolveExtensionName(ctx.paths, input) };
  const spec = parseSpec(input, cwd ?? ctx.cwd ?? process.cwd(), homeDir(ctx.env));
  if (spec.kind === 'invalid') return { spec };
  const source = sourceFor(spec.kind);
  if (source.linked && 'path' in spec) {
    // A package's own directory in the store (`cd ~/.config/yolop/extensions/lsp && yep-ext info .`).
    const dir = canonicalDir(spec.path);
    if (dirname(dir) === canonicalDir(ctx.paths.storeDir) && isValidName(basename(dir))) return { name: basename(dir) };
  }
  const entry = entryInstalledFrom(lock, spec);
  return entry ? { name: entry.name } : { spec };
}

/** The lock entry installed from the source `spec` names, by that source kind's own rule. */
export function entryInstalledFrom(lock: Lockfile, spec: Exclude<Spec, { kind: 'invalid' }>): LockEntry | undefined {
  const source = sourceFor(spec.kind);
  return lock.entries.find((e) => e.source.type === spec.kind && source.namesInstalled?.(spec, e.source) === true);
}

/**
 * The installed extension's name `input` means, or an error: E_NAME for text that is
 * neither a name nor a source, E_NOT_INSTALLED for a source nothing is installed from.
 * The lock is read only when `input` is not a name.
 */
export async function resolveInstalled(ctx: Pick<Context, 'paths' | 'env' | 'cwd'>, input: string, lock?: Lockfile): Promise<string> {
  if (isValidName(input.trim())) return resolveExtensionName(ctx.paths, input);
  return installedNameIn(ctx, lock ?? (await loadStoreLock(ctx.paths)), input);
}

/** resolveInstalled over a lock already read. */
export function installedNameIn(ctx: Pick<Context, 'paths' | 'env' | 'cwd'>, lock: Lockfile, input: string): string {
  const found = lookUpInstalled(ctx, lock, input);
  if (found.name !== undefined) return found.name;
  const { spec } = found;
  // Neither a name nor a source: the name rule's own error.
  if (spec.kind === 'invalid') return normalizeExtensionName(input);
  throw notInstalledFrom(
    spec.kind,
    input.trim(),
    `\`yep-ext install ${input.trim()}\` installs it; \`yep-ext list\` shows what is installed (and where each comes from).`,
  );
}

/** The error for a source (a directory, a git URL) no installed extension comes from: exit 3 on every command. */
export function notInstalledFrom(kind: Exclude<Spec, { kind: 'invalid' }>['kind'], shown: string, hint: string): YepError {
  return new YepError(
    'E_NOT_INSTALLED',
    `No installed extension comes from the ${sourceFor(kind).noun} ${shown}: no entry of extensions.lock records it as its source.`,
    {
      hint,
    },
  );
}

/** Names of the packages in the store (for "did you mean"); [] when the store cannot be read. */
export function installedNames(paths: Paths): string[] {
  try {
    return readdirSync(paths.storeDir).filter((n) => isValidName(n) && !n.startsWith('.'));
  } catch {
    return [];
  }
}
