/**
 * Fake `yolop` agents for engines tests: a directory holding an executable
 * `yolop` shell script, to put first on PATH (or name with YOLOP_BIN). Each run
 * appends a line to `<dir>/runs`, so tests can count the spawns the cache saved.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export interface FakeAgent {
  dir: string;
  bin: string;
  /** How many times the script ran. */
  runs(): number;
}

/** A `yolop` that runs `body` (sh) after logging its run. */
export function fakeAgentScript(dir: string, body: string): FakeAgent {
  mkdirSync(dir, { recursive: true });
  const bin = join(dir, 'yolop');
  const runs = join(dir, 'runs');
  const script = `#!/bin/sh\necho run >> '${runs}'\n${body}\n`;
  // The same script again is left as it is: a rewrite would give it a new mtime and ctime, and
  // the CLI, which caches the agent's version by them, would ask the agent again (a spawn)
  // where a test only meant to name the same agent.
  if (!existsSync(bin) || readFileSync(bin, 'utf8') !== script) {
    writeFileSync(bin, script);
    chmodSync(bin, 0o755);
  }
  return { dir, bin, runs: () => (existsSync(runs) ? readFileSync(runs, 'utf8').split('\n').filter(Boolean).length : 0) };
}

/** A `yolop` whose `--version` prints `yolop <version>`. */
export function fakeAgent(dir: string, version: string): FakeAgent {
  return fakeAgentScript(dir, `[ "$1" = --version ] && echo 'yolop ${version}' && exit 0\nexit 2`);
}

/** PATH entries of this process that hold no `yolop`: "no agent on PATH" for real. */
export function pathWithoutAgent(path = process.env.PATH ?? '/usr/bin:/bin'): string {
  return path
    .split(delimiter)
    .filter((d) => {
      try {
        return !statSync(join(d, 'yolop')).isFile();
      } catch {
        return true;
      }
    })
    .join(delimiter);
}
