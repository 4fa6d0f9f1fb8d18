#!/usr/bin/env node
// `npm run demo`: yep-ext on something real that ships in the repo, in a throw-away
// home (YOLOP_CONFIG_DIR in a temp dir), so it never touches your own yolop setup.
// Installs ./examples/echo-node from its path, lists it, doctors it (spawning the
// server and running the handshake), enables it, then removes it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const home = mkdtempSync(join(tmpdir(), 'yep-ext-demo-'));
const env = { ...process.env, YOLOP_CONFIG_DIR: join(home, 'yolop') };
const steps = [['install', './examples/echo-node'], ['list'], ['doctor', 'echo-node'], ['enable', 'echo-node'], ['list'], ['remove', 'echo-node']];
let failed = false;
console.log(`# demo home: YOLOP_CONFIG_DIR=${env.YOLOP_CONFIG_DIR}\n`);
for (const args of steps) {
  console.log(`$ yep-ext ${args.join(' ')}`);
  const r = spawnSync(process.execPath, [join(root, 'bin', 'run.js'), ...args], { cwd: root, env, stdio: 'inherit' });
  console.log('');
  if (r.status !== 0) {
    console.error(`demo: \`yep-ext ${args.join(' ')}\` exited ${r.status}`);
    failed = true;
    break;
  }
}
rmSync(home, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
