/**
 * settings.toml as yolop's own code reads it: test/fixtures/host-settings/table.json
 * holds, for hand-written cases, generated multi-entry files and the files yep-ext's
 * enable / `enable --config` / disable write over them, the capability instances
 * that yolop's `apply_capability_settings` runs (scripts/host-settings-oracle, the
 * host's functions compiled as they are). yep-ext's one reading (host-reading.ts,
 * through settingsLookup) must equal it for every `ext:` ref, and so must the
 * independent model the property tests use (test/helpers/settings-model.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applySettingsEdit, settingsLookup, type SettingsEdit } from '../../src/core/settings/settings.js';
import { REPO_ROOT } from '../helpers/home.js';
import { applyAll, layeredEntries } from '../helpers/settings-model.js';

interface Row {
  label: string;
  text: string;
  from?: number;
  op?: SettingsEdit;
  oracle: { ref: string; config: Record<string, unknown> | null }[];
}
const table = JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'host-settings', 'table.json'), 'utf8')) as { rows: Row[] };

/** JSON as serde_json prints it: a non-finite float is null, a bigint a number, an empty config null. */
const asHost = (v: unknown): unknown =>
  JSON.parse(
    JSON.stringify(v ?? null, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : typeof x === 'number' && !Number.isFinite(x) ? null : x)),
    (_k, x: unknown) => x,
  );
const sorted = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(
          Object.keys(x)
            .sort()
            .map((k) => [k, (x as Record<string, unknown>)[k]]),
        )
      : x,
  );
const oracleFor = (row: Row, ref: string) => row.oracle.filter((i) => i.ref === ref).map((i) => asHost(i.config ?? {}));
const extRefs = (row: Row, more: readonly string[]) =>
  [...new Set([...row.oracle.map((i) => i.ref), ...more.map((n) => `ext:${n}`)])].filter((r) => r.startsWith('ext:'));

describe("settings.toml: yep-ext's reading is yolop's (the host's own code as oracle)", () => {
  it(`${table.rows.length} rows: every ext: ref, every instance, every config key`, () => {
    expect(table.rows.length).toBeGreaterThan(370);
    const failures: string[] = [];
    for (const row of table.rows) {
      const lookup = settingsLookup(row.text);
      for (const ref of extRefs(row, lookup.extNames)) {
        const ours = lookup(ref.slice(4));
        const got = sorted(ours.instances.map((i) => asHost(i.config)));
        const want = sorted(oracleFor(row, ref));
        if (got !== want) failures.push(`${row.label}, ${ref}: yep-ext ${got}, yolop ${want}`);
        if (ours.enabled !== oracleFor(row, ref).length > 0) failures.push(`${row.label}, ${ref}: yep-ext says enabled=${ours.enabled}`);
      }
    }
    expect(failures.slice(0, 10).join('\n')).toBe('');
  });

  it('the property tests’ model agrees with the oracle on every row', () => {
    const failures: string[] = [];
    for (const row of table.rows) {
      const model = applyAll(layeredEntries(row.text)).map((i) => ({ ref: i.ref, config: asHost(i.config) }));
      const want = row.oracle.map((i) => ({ ref: i.ref, config: asHost(i.config ?? {}) }));
      if (sorted(model) !== sorted(want)) failures.push(`${row.label}: model ${sorted(model)}, yolop ${sorted(want)}`);
    }
    expect(failures.slice(0, 10).join('\n')).toBe('');
  });

  it("each file yep-ext wrote is still what it writes, and yolop's code reads the promise", () => {
    const written = table.rows.filter((r) => r.op);
    expect(written.length).toBeGreaterThan(150);
    for (const row of written) {
      const source = table.rows[row.from as number] as Row;
      const again = applySettingsEdit(source.text, 'alpha', row.op as SettingsEdit);
      // A writer that changed on purpose: regenerate the table (scripts/host-settings-oracle/README.md).
      expect(again.text, `${row.label}: yep-ext now writes something else`).toBe(row.text);
      const runs = oracleFor(row, 'ext:alpha');
      if (row.op?.op === 'disable') expect(runs, row.label).toEqual([]);
      else {
        expect(runs.length, row.label).toBeGreaterThan(0);
        if (row.op?.op === 'enable' && row.op.values) expect((runs[0] as Record<string, unknown>).endpoint, row.label).toBe('https://set.example');
      }
    }
  });

  it("disable then enable: yolop's code runs exactly what it ran before the round trip", () => {
    const back = table.rows.filter((r) => r.label.startsWith('yep-ext enable after disable'));
    expect(back.length).toBeGreaterThan(40);
    for (const row of back) {
      const disabled = table.rows[row.from as number] as Row;
      const original = table.rows[disabled.from as number] as Row;
      expect(sorted(oracleFor(row, 'ext:alpha')), row.label).toBe(sorted(oracleFor(original, 'ext:alpha')));
    }
  });
});
