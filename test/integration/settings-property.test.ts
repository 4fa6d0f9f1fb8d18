/**
 * Property test ("host-exact settings"), in-process bulk: 240 generated
 * multi-entry settings files (orders of enabled/disabled entries, `id` vs `ref`,
 * literal and escaped strings, comments, other tables and capabilities
 * interleaved, inline config of several types, CRLF, BOM). For each, a seeded
 * sequence of the real core operations (enable, enable --config, disable, list,
 * the host's own enable, remove) runs on a real temp home, and after every one
 * yep-ext's report and the file must agree with an independent in-order reading
 * (test/helpers/settings-model.ts), with every byte outside ext:alpha's entries
 * unchanged. test/cli/settings-property-cli.test.ts runs a subset through the CLI.
 * A failure names its seed: `SETTINGS_SEED=<n> npx vitest run <this file>` replays it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
let pkg: string;
beforeAll(() => {
  home = makeTempHome();
  pkg = writePackage(join(home.root, 'src', SUBJECT), { name: SUBJECT, yolop: { config_schema: SUBJECT_SCHEMA } });
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
    for (const seed of seeds) {
      const ctx = home.ctx();
      await installSpec(ctx, pkg);
      const file = generateFile(seed, SUBJECT);
      mkdirSync(home.configDir, { recursive: true });
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
      for (const op of opsFor(seed)) {
        const before = readFileSync(ctx.paths.settingsFile, 'utf8');
        let report: unknown;
        try {
          report = await run(op, ctx.paths.settingsFile);
        } catch (e) {
          failures.push(`seed ${seed}, ${op.kind}: threw ${(e as Error).message}`);
          break;
        }
        commands++;
        const after = existsSync(ctx.paths.settingsFile) ? readFileSync(ctx.paths.settingsFile, 'utf8') : '';
        for (const d of disagreements(file, op, before, after, report)) failures.push(`seed ${seed}, after ${op.kind}: ${d}`);
        if (op.kind !== 'list' && op.kind !== 'remove') {
          const item = await run({ kind: 'list' }, ctx.paths.settingsFile);
          for (const d of disagreements(file, { kind: 'list' }, after, after, item)) failures.push(`seed ${seed}, list after ${op.kind}: ${d}`);
        }
      }
      if (failures.length > 20) break;
    }
    expect(failures, failures.slice(0, 20).join('\n')).toEqual([]);
    expect(commands).toBeGreaterThanOrEqual(seeds.length * 3);
  }, 300_000);
});
