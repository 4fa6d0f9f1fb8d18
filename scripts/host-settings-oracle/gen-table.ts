/**
 * Regenerate test/fixtures/host-settings/table.json: settings files, and the
 * capability instances yolop's own code runs for each (the oracle in this folder).
 * See README.md here for how to build the oracle; then:
 *
 *   npx tsx scripts/host-settings-oracle/gen-table.ts /path/to/host-settings-oracle
 *
 * Rows: hand-written cases (the shapes host-compat §5 names), generated files
 * (test/helpers/settings-model.ts), and what yep-ext's enable, `enable --config` and
 * disable write over each generated file (`from`: the row it was written from, `op`).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applySettingsEdit, type SettingsEdit } from '../../src/core/settings/settings.js';
import { generateFile } from '../../test/helpers/settings-model.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT = join(ROOT, 'test', 'fixtures', 'host-settings', 'table.json');
const oracle = process.argv[2];
if (!oracle) {
  console.error('usage: gen-table.ts <path to the built host-settings-oracle binary>');
  process.exit(2);
}

const cap = (...rows: string[]) => `[[capabilities]]\n${rows.join('\n')}\n`;
const HAND: [string, string][] = [
  [
    'two plain entries merge into one instance, later keys win',
    `${cap('ref = "ext:x"', 'endpoint = "a"', 'port = 1')}\n${cap('ref = "ext:x"', 'endpoint = "b"')}`,
  ],
  ['a bare entry changes nothing in an existing instance', `${cap('ref = "ext:x"', 'endpoint = "a"')}\n${cap('ref = "ext:x"')}`],
  [
    'enabled = false removes every instance seen so far',
    cap('ref = "ext:x"', 'endpoint = "a"') + cap('ref = "ext:x"', 'append = true', 'port = 2') + cap('ref = "ext:x"', 'enabled = false', 'port = 3'),
  ],
  [
    'an entry after a removal starts again from nothing',
    cap('ref = "ext:x"', 'endpoint = "a"') + cap('ref = "ext:x"', 'enabled = false') + cap('ref = "ext:x"', 'port = 4'),
  ],
  [
    'append = true adds another instance; plain entries merge into the first',
    cap('ref = "ext:x"', 'a = 1') + cap('ref = "ext:x"', 'append = true', 'b = 2') + cap('ref = "ext:x"', 'c = 3'),
  ],
  ['append = true as the first entry makes the first instance', cap('ref = "ext:x"', 'append = true', 'a = 1') + cap('ref = "ext:x"', 'b = 2')],
  ['a non-boolean enabled or append is ignored', cap('ref = "ext:x"', 'enabled = "no"', 'a = 1') + cap('ref = "ext:x"', 'append = 1', 'b = 2')],
  ['id is read like ref', cap('id = "ext:x"', 'a = 1') + cap('ref = "ext:x"', 'b = 2')],
  ['a present ref that is not a string names nothing, whatever id says', cap('ref = 5', 'id = "ext:x"', 'a = 1') + cap('ref = "ext:x"', 'b = 2')],
  ['enabled = true is a plain entry', cap('ref = "ext:x"', 'enabled = true', 'a = 1') + cap('ref = "ext:x"', 'enabled = true', 'a = 2')],
  ['config on a removing entry is ignored', cap('ref = "ext:x"', 'enabled = false', 'a = 1')],
  ['capabilities that is not an array reads as no entries', '[capabilities]\nref = "ext:x"\n'],
  [
    'a hand-written enabled = false before an entry with config of its own',
    `${cap('ref = "ext:x"', 'enabled = false # paused', 'endpoint = "old"')}\n${cap('ref = "ext:x"', 'port = 1')}`,
  ],
  [
    'a disabled entry followed by a bare one (the host enabled it again)',
    `${cap('ref = "ext:x"', 'endpoint = "e"', 'enabled = false')}\n${cap('ref = "ext:x"')}`,
  ],
];

interface Row {
  label: string;
  text: string;
  from?: number;
  op?: SettingsEdit;
  oracle?: unknown;
}
const rows: Row[] = HAND.map(([label, text]) => ({ label, text }));
const EDITS: SettingsEdit[] = [{ op: 'enable' }, { op: 'enable', values: { endpoint: 'https://set.example' } }, { op: 'disable' }];
for (let seed = 1; seed <= 100; seed++) {
  const file = generateFile(seed, 'alpha');
  const from = rows.length;
  rows.push({ label: `generated file, seed ${seed}`, text: file.text });
  for (const op of EDITS) {
    const written = applySettingsEdit(file.text, 'alpha', op);
    if (!written.changed) continue;
    rows.push({ label: `yep-ext ${op.op}${'values' in op ? ' --config' : ''} over seed ${seed}`, text: written.text, from, op });
    if (op.op !== 'disable') continue;
    // The round trip: enable over what disable wrote (the test compares its reading with the original's).
    const back = applySettingsEdit(written.text, 'alpha', { op: 'enable' });
    rows.push({ label: `yep-ext enable after disable over seed ${seed}`, text: back.text, from: rows.length - 1, op: { op: 'enable' } });
  }
}
const answers = JSON.parse(execFileSync(oracle, { input: JSON.stringify(rows.map((r) => r.text)), maxBuffer: 64 * 1024 * 1024 }).toString()) as unknown[];
for (const [i, r] of rows.entries()) r.oracle = answers[i];
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(
  OUT,
  `${JSON.stringify(
    {
      about: 'yolop v0.3.0 capability_settings.rs (apply_capability_settings, merge_config, parse_capability_entry), run by scripts/host-settings-oracle',
      rows,
    },
    null,
    1,
  )}\n`,
);
console.log(`${rows.length} rows -> ${OUT}`);
