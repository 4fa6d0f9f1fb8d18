/**
 * A `file://` index (a mirror on disk) whose config.json or crate index file is a FIFO:
 * the command ends at once with the regular-file guard's refusal (exit 7, naming the
 * file and what it is), never blocking on the pipe and never as an internal error.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';

let home: TempHome;
let index: string;
const LINE = `${JSON.stringify({ name: 'yolop-extension-hello', vers: '0.1.0', deps: [], cksum: 'a'.repeat(64), features: {}, yanked: false })}\n`;

beforeEach(() => {
  home = makeTempHome();
  index = join(home.root, 'mirror', 'index');
  mkdirSync(join(index, 'yo', 'lo'), { recursive: true });
});
afterEach(() => home.cleanup());

it.each([
  [
    'index/config.json',
    () => {
      writeFileSync(join(index, 'yo', 'lo', 'yolop-extension-hello'), LINE);
      execFileSync('mkfifo', [join(index, 'config.json')]);
      return join(index, 'config.json');
    },
  ],
  [
    'the crate index file',
    () => {
      writeFileSync(join(index, 'config.json'), '{"dl": "file:///nowhere/{crate}-{version}.crate"}\n');
      execFileSync('mkfifo', [join(index, 'yo', 'lo', 'yolop-extension-hello')]);
      return join(index, 'yo', 'lo', 'yolop-extension-hello');
    },
  ],
])('%s as a FIFO: install (and info) end with the regular-file refusal (exit 7), nothing installed', async (_what, make) => {
  const fifo = make();
  // info reads the index file only; install reads config.json too (where the .crate is).
  const runs = fifo.endsWith('config.json')
    ? [['install', 'hello']]
    : [
        ['install', 'hello'],
        ['info', 'hello'],
      ];
  for (const args of runs) {
    const r = await runCli([...args, '--json'], { env: { ...home.env, YEP_EXT_INDEX: `${pathToFileURL(index).href}/` } });
    expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(7);
    expect(jsonOf(r).error).toMatchObject({ code: 'E_STATE', details: { file: fifo, is: 'a FIFO (named pipe)' } });
  }
  const store = join(home.configDir, 'extensions');
  expect(existsSync(store) ? readdirSync(store).filter((e) => !e.startsWith('.')) : []).toEqual([]);
});
