/**
 * Property test ("host-exact settings"), through the built CLI: 24
 * generated multi-entry settings files (seeds apart from the in-process bulk in
 * test/integration/settings-property.test.ts, same generator and model), each
 * driven by real `yep-ext enable`, `enable --config k=v`, `disable`, `remove`
 * processes and the fast `list --json` after every command, on a real temp home.
 * After each, yep-ext's report and the file must agree with the independent
 * in-order reading, and every byte outside ext:alpha's entries must be unchanged.
 * Needs a build (npm run build). A failure names its seed.
 *
 * Each seed starts from the config directory a fresh install of ext:alpha leaves: the
 * install runs once, and each seed gets its entries back (test/helpers/config-copy.ts)
 * instead of installing again; the first seed checks the restored directory against the
 * install's own.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configEntries, restoreConfig, type ConfigEntry } from '../helpers/config-copy.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { generateFile, hostRuns, SUBJECT_SCHEMA } from '../helpers/settings-model.js';
import { disagreements, hostEnable, opsFor, roundTripDisagreements, SUBJECT, type Op } from '../helpers/settings-property.js';
import { installSpec } from '../../src/core/operations/install.js';

const SEEDS = Array.from({ length: 20 }, (_, i) => 50_000 + i * 7);

let home: TempHome;
let installed: ConfigEntry[];
beforeAll(async () => {
  home = makeTempHome();
  const pkg = writePackage(join(home.root, 'src', SUBJECT), { name: SUBJECT, yolop: { config_schema: SUBJECT_SCHEMA } });
  await installSpec(home.ctx(), pkg);
  installed = configEntries(home.configDir);
});
afterAll(() => home.cleanup());
let restored = 0;
beforeEach(() => {
  restoreConfig(home.configDir, installed);
  if (restored++ === 0) expect(configEntries(home.configDir), 'the restored config directory is the one the install left').toEqual(installed);
});

async function cli(args: string[], expectCode = 0): Promise<any> {
  const r = await runCli([...args, '--json'], { env: home.env });
  if (r.code !== expectCode) throw new Error(`yep-ext ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
  return jsonOf(r);
}

async function run(op: Op, settingsFile: string): Promise<unknown> {
  switch (op.kind) {
    case 'enable':
      return cli(['enable', SUBJECT]);
    case 'enable-config':
      return cli(['enable', SUBJECT, '--config', `${op.key}=${op.raw}`]);
    case 'disable':
      return cli(['disable', SUBJECT]);
    case 'remove':
      return cli(['remove', SUBJECT]);
    case 'host-enable':
      writeFileSync(settingsFile, hostEnable(readFileSync(settingsFile, 'utf8')));
      return undefined;
    case 'list':
      return (await cli(['list'])).extensions.find((e: { name: string }) => e.name === SUBJECT);
  }
}

describe('settings.toml: yep-ext reports what the host reads, over generated files (CLI)', () => {
  // The suite's timeout (vitest.config.ts): a seed is 8-12 CLI runs one after another, which
  // a loaded CI machine stretches close to a shorter timeout.
  it.each(SEEDS)('seed %i', async (seed) => {
    const ctx = home.ctx();
    const file = generateFile(seed, SUBJECT);
    writeFileSync(ctx.paths.settingsFile, file.text);
    const failures: string[] = [];
    // A switch and its inverse give the file back; then the seeded commands start from the same file again.
    const [first, second] = hostRuns(file.text, SUBJECT).enabled ? ['disable', 'enable'] : ['enable', 'disable'];
    await cli([first as string, SUBJECT]);
    const middle = readFileSync(ctx.paths.settingsFile, 'utf8');
    await cli([second as string, SUBJECT]);
    failures.push(...roundTripDisagreements(file.text, middle, readFileSync(ctx.paths.settingsFile, 'utf8')).map((d) => `round trip: ${d}`));
    writeFileSync(ctx.paths.settingsFile, file.text);
    // A list of a text listed before in the seed is the same case again (until the remove, the
    // commands change settings.toml alone): not run again, as in the in-process bulk. Every
    // list that runs also checks that it left the file as it was.
    const listed = new Set<string>();
    for (const op of opsFor(seed)) {
      const before = readFileSync(ctx.paths.settingsFile, 'utf8');
      if (op.kind === 'list' && listed.has(before)) continue;
      const report = await run(op, ctx.paths.settingsFile);
      if (op.kind === 'list') listed.add(before);
      const after = existsSync(ctx.paths.settingsFile) ? readFileSync(ctx.paths.settingsFile, 'utf8') : '';
      failures.push(...disagreements(file, op, before, after, report).map((d) => `after ${op.kind}: ${d}`));
      if (op.kind !== 'list' && op.kind !== 'remove' && !listed.has(after)) {
        listed.add(after);
        const item = await run({ kind: 'list' }, ctx.paths.settingsFile);
        const listedAfter = readFileSync(ctx.paths.settingsFile, 'utf8');
        failures.push(...disagreements(file, { kind: 'list' }, after, listedAfter, item).map((d) => `list after ${op.kind}: ${d}`));
      }
    }
    expect(failures, `seed ${seed}:\n${failures.join('\n')}`).toEqual([]);
  });
});
