/**
 * An oclif-free runner for the hottest command shape, `list` (host integrations
 * and scripts call it on every start). Loading and configuring oclif costs about
 * 3-4x a bare `node -e 0`; `list` itself needs a few milliseconds.
 *
 * Honest by construction: it accepts only argument lists whose meaning is
 * unambiguous (`list` plus at most one each of --json and --verify/--no-verify)
 * and an environment in which oclif would print nothing extra;
 * anything else (help, unknown flags, duplicates, debug variables, an oclif
 * theme) returns false and the caller runs oclif as usual. Output, exit status
 * and error reports come from the same functions the List command uses, and
 * test/cli/fast-path.test.ts runs every shape both ways and compares the bytes.
 */
import { readFileSync } from 'node:fs';
import { listExtensions } from '../core/operations/list.js';
import { makeCliContext } from './cli-context.js';
import { testSeams } from './test-seams.js';
import { listJson, renderList } from './list-view.js';
import { stdoutShape } from './terminal.js';
import { completionOutput } from './complete-run.js';
import type { CompletionCommand } from './complete.js';
import { writeError } from './report-error.js';
import { oclifWouldDiffer, writeStdout } from './fast-path-env.js';

export interface FastListFlags {
  json: boolean;
  verify: boolean;
}

/** The flags of `list …` when every argument is one we fully understand, else undefined. */
export function parseFastListArgs(args: string[]): FastListFlags | undefined {
  const flags: FastListFlags = { json: false, verify: true };
  const seen = new Set<string>();
  const once = (key: string): boolean => {
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  };
  for (const a of args) {
    if (a === '--json') {
      if (!once('json')) return undefined;
      flags.json = true;
    } else if (a === '--verify' || a === '--no-verify') {
      if (!once('verify')) return undefined;
      flags.verify = a === '--verify';
    } else {
      return undefined;
    }
  }
  return flags;
}

/**
 * Run `argv` (process.argv.slice(2)) without oclif if it is a shape we handle.
 * Returns false, having done nothing, when the caller must run oclif instead.
 */
export async function runFastPath(argv: string[]): Promise<boolean> {
  if (argv[0] === '__complete') return runComplete(argv.slice(1));
  if (argv[0] !== 'list') return false;
  const flags = parseFastListArgs(argv.slice(1));
  if (!flags || oclifWouldDiffer(process.env, flags.json)) return false;
  // Test-only (a preload's seam): lets the differential test prove this path ran.
  testSeams()?.fastPath?.('list');
  let text: string;
  try {
    const ctx = makeCliContext({ json: flags.json, abort: new AbortController() });
    const items = await listExtensions(ctx, { verify: flags.verify });
    text = flags.json ? JSON.stringify(listJson(items), null, 2) : await renderList(items, stdoutShape());
  } catch (e) {
    process.exitCode = writeError(e, flags.json);
    return true;
  }
  // oclif prints through console.log(util.format(text)), and util.format of a
  // lone string is that string: text + newline are the same bytes. Outside the
  // try on purpose: a failing stdout (ENOSPC) crashes both paths with status 1.
  writeStdout(`${text}\n`);
  return true;
}

/**
 * `__complete` (a Tab press in a shell; the scripts of `yep-ext completion`
 * call it): answered here only, never by oclif (it is no oclif command, so it
 * is in no help), from oclif.manifest.json, the data oclif itself would load.
 * A Tab press should not wait for oclif to load.
 */
async function runComplete(words: string[]): Promise<boolean> {
  let commands: CompletionCommand[];
  try {
    const manifest = JSON.parse(readFileSync(new URL('../../oclif.manifest.json', import.meta.url), 'utf8')) as { commands: Record<string, CompletionCommand> };
    commands = Object.values(manifest.commands);
  } catch {
    return false;
  }
  testSeams()?.fastPath?.('__complete');
  const text = await completionOutput(commands, words, process.env);
  if (text) writeStdout(`${text}\n`);
  return true;
}
