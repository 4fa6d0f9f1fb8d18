/**
 * Property test ("host-exact settings"), in-process bulk: 240 generated
 * multi-entry settings files (orders of enabled/disabled entries, `id` vs `ref`,
 * literal and escaped strings, comments, other tables and capabilities
 * interleaved, inline config of several types, CRLF, BOM). For each, a seeded
 * sequence of the real core operations (enable, enable --config, disable, list,
 * the host's own enable, remove) runs on a real temp home, and after every one
 * yep-ext's report (and list's, of each text the seed has not listed yet) and the
 * file must agree with an independent in-order reading
 * (test/helpers/settings-model.ts), with every byte outside ext:alpha's entries
 * unchanged. test/cli/settings-property-cli.test.ts runs a subset through the CLI.
 * A failure names its seed: `SETTINGS_SEED=<n> npx vitest run <this file>` replays it.
 *
 * Each file starts from the config directory a fresh install of ext:alpha leaves: the
 * install runs once, and every seed gets its entries back (dirs, files with their bytes and
 * modes, the store link) instead of installing again; the first seed checks the restored
 * directory against the install's own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configEntries, restoreConfig, type ConfigEntry } from '../helpers/config-copy.js';
import { makeTempHome, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { generateFile, hostRuns, SUBJECT_SCHEMA } from '../helpers/settings-model.js';
import { disagreements, hostEnable, opsFor, roundTripDisagreements, SUBJECT, type Op } from '../helpers/settings-property.js';
import { installSpec } from '../../src/core/operations/install.js';
import { runEnable } from '../../src/core/operations/enable.js';
import { runDisable } from '../../src/core/operations/disable.js';
import { removeExtension } from '../../src/core/operations/remove.js';
import { listExtensions } from '../../src/core/operations/list.js';
import { listJson } from '../../src/cli/list-view.js';

const FILES = 240;
const seeds = process.env.SETTINGS_SEED ? [Number(process.env.SETTINGS_SEED)] : Array.from({ length: FILES }, (_, i) => 1000 + i);

let home: TempHome;
let installed: ConfigEntry[];
beforeAll(async () => {
  home = makeTempHome();
  const pkg = writePackage(join(home.root, 'src', SUBJECT), { name: SUBJECT, yolop: { config_schema: SUBJECT_SCHEMA } });
  await installSpec(home.ctx(), pkg);
  installed = configEntries(home.configDir);
});
afterAll(() => home.cleanup());

async function run(op: Op, settingsFile: string): Promise<unknown> {
  const ctx = home.ctx();
  switch (op.kind) {
    case 'enable':
      return runEnable(ctx, SUBJECT);
    case 'enable-config':
      return runEnable(ctx, SUBJECT, { config: [`${op.key}=${op.raw}`] });
    case 'disable':
      return runDisable(ctx, SUBJECT);
    case 'remove':
      return removeExtension(ctx, SUBJECT);
    case 'host-enable':
      writeFileSync(settingsFile, hostEnable(readFileSync(settingsFile, 'utf8')));
      return undefined;
    case 'list': {
      const doc = listJson(await listExtensions(ctx));
      return doc.extensions.find((e) => e.name === SUBJECT);
    }
  }
}

describe('settings.toml: yep-ext reports what the host reads, over generated files (in-process)', () => {
  it(`${seeds.length} files, every command agrees with the in-order reading`, async () => {
    const failures: string[] = [];
    let commands = 0;
    for (const [i, seed] of seeds.entries()) {
      const ctx = home.ctx();
      // The config directory exactly as the install left it: whatever the last seed did is gone.
      restoreConfig(home.configDir, installed);
      if (i === 0) expect(configEntries(home.configDir), 'the restored config directory is the one the install left').toEqual(installed);
      const file = generateFile(seed, SUBJECT);
      writeFileSync(ctx.paths.settingsFile, file.text);
      // A switch and its inverse give the file back; then the seeded commands start from the same file again.
      const wasOn = hostRuns(file.text, SUBJECT).enabled;
      try {
        await (wasOn ? runDisable : runEnable)(ctx, SUBJECT);
        const middle = readFileSync(ctx.paths.settingsFile, 'utf8');
        await (wasOn ? runEnable : runDisable)(ctx, SUBJECT);
        for (const d of roundTripDisagreements(file.text, middle, readFileSync(ctx.paths.settingsFile, 'utf8')))
          failures.push(`seed ${seed}, round trip: ${d}`);
      } catch (e) {
        failures.push(`seed ${seed}, round trip: threw ${(e as Error).message}`);
      }
      writeFileSync(ctx.paths.settingsFile, file.text);
      // The settings texts listed so far in this seed. Until its remove, a seed's commands change
      // settings.toml alone (no secrets, no lock, no store), so a list of a text listed before in
      // the seed is the same case again (same file, same store) and is not run again: the seed's
      // explicit `list` right after a command that left the text as the list after that command
      // saw it, or a command that changed nothing. Every list that runs also checks that it left
      // the file as it was.
      const listed = new Set<string>();
      for (const op of opsFor(seed)) {
        const before = readFileSync(ctx.paths.settingsFile, 'utf8');
        if (op.kind === 'list' && listed.has(before)) continue;
        let report: unknown;
        try {
          report = await run(op, ctx.paths.settingsFile);
        } catch (e) {
          failures.push(`seed ${seed}, ${op.kind}: threw ${(e as Error).message}`);
          break;
        }
        commands++;
        if (op.kind === 'list') listed.add(before);
        const after = existsSync(ctx.paths.settingsFile) ? readFileSync(ctx.paths.settingsFile, 'utf8') : '';
        for (const d of disagreements(file, op, before, after, report)) failures.push(`seed ${seed}, after ${op.kind}: ${d}`);
        if (op.kind !== 'list' && op.kind !== 'remove' && !listed.has(after)) {
          listed.add(after);
          const item = await run({ kind: 'list' }, ctx.paths.settingsFile);
          const listedAfter = readFileSync(ctx.paths.settingsFile, 'utf8');
          for (const d of disagreements(file, { kind: 'list' }, after, listedAfter, item)) failures.push(`seed ${seed}, list after ${op.kind}: ${d}`);
        }
      }
      if (failures.length > 20) break;
    }
    expect(failures, failures.slice(0, 20).join('\n')).toEqual([]);
    expect(commands).toBeGreaterThanOrEqual(seeds.length * 3);
  }, 300_000);
});
