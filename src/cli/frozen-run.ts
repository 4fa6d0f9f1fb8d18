/**
 * The body of `yep-ext install --frozen`, after its arguments are parsed
 * (src/commands/install.ts). Its own module: a warm frozen install evaluates none
 * of the plain install's code (install-run.ts).
 */
import type { CommandIo } from './command.js';
import { YepError, isYepError } from '../core/errors.js';
import type { Context } from '../core/context.js';
import { installFrozen, type FrozenItem } from '../core/operations/frozen.js';

/** `install --frozen [--lockfile <file>] [--enable]`: the lock's entries as pinned, told one line each; the --json document returned. */
export async function runFrozen(
  io: CommandIo,
  { lockfile, enable, 'ignore-engines': ignoreEngines }: { lockfile?: string | undefined; enable: boolean; 'ignore-engines': boolean },
  specs: string[],
): Promise<unknown> {
  if (specs.length > 0)
    throw new YepError('E_USAGE', '--frozen installs what the lockfile pins; it takes no sources.', { hint: 'Drop the sources, or drop --frozen.' });
  const ctx = io.context();
  const json = io.json;
  const items = await installFrozen(ctx, {
    ...(lockfile ? { lockfile, cwd: io.io.cwd } : {}),
    onItem: (item) => {
      if (!json) io.logToStderr(frozenLine(item));
    },
  });
  if (!json)
    io.log(`${items.filter((i) => i.status === 'installed').length} installed, ${items.filter((i) => i.status === 'skipped').length} already as locked.`);
  if (!enable) return { frozen: items.map(frozenJson), enabled: null };
  const enabled = await enableAll(
    ctx,
    items.map((i) => i.name),
    ignoreEngines,
  );
  if (!json) for (const e of enabled) io.logToStderr(e.ok ? `✔ ${e.name} enabled` : `! ${e.name}: ${e.error.message}`);
  const incomplete = enabled.filter((e) => !e.ok);
  if (incomplete.length > 0) {
    throw new YepError(
      incomplete.every((e) => !e.ok && e.error.code === 'E_SETUP_INCOMPLETE') ? 'E_SETUP_INCOMPLETE' : 'E_PARTIAL',
      `${incomplete.map((e) => e.name).join(', ')}: not fully set up.`,
      {
        hint: incomplete.flatMap((e) => (e.ok ? [] : [e.error.hint ?? ''])).join('\n'),
        details: {
          frozen: items.map(frozenJson),
          enabled: enabled.map((e) => (e.ok ? { name: e.name, ok: true, error: null } : { name: e.name, ok: false, error: e.error.toJSON() })),
        },
      },
    );
  }
  return { frozen: items.map(frozenJson), enabled: enabled.map((e) => ({ name: e.name, ok: true, error: null })) };
}

/** Enable each name; setup problems are collected, not thrown, so provisioning reports them all. */
async function enableAll(
  ctx: Context,
  names: string[],
  ignoreEngines: boolean,
): Promise<Array<{ name: string; ok: true } | { name: string; ok: false; error: YepError }>> {
  const out: Array<{ name: string; ok: true } | { name: string; ok: false; error: YepError }> = [];
  // Loaded here, not at the top: enable brings ajv, which a plain install never needs.
  const { runEnable } = await import('../core/operations/enable.js');
  for (const name of names) {
    try {
      await runEnable(ctx, name, { ignoreEngines });
      out.push({ name, ok: true });
    } catch (e) {
      if (!isYepError(e)) throw e;
      out.push({ name, ok: false, error: e });
    }
  }
  return out;
}

function frozenLine(item: FrozenItem): string {
  return item.status === 'failed'
    ? `✖ ${item.name}: ${item.reason}`
    : item.status === 'skipped'
      ? `= ${item.name} (already as locked)`
      : `✔ ${item.name} verified`;
}

/** A frozen item for --json: every key present, null when it does not apply (docs/json.md). */
function frozenJson(item: FrozenItem) {
  return { name: item.name, status: item.status, reason: item.reason ?? null, engines: item.engines ?? null };
}
