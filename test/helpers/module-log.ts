/**
 * Which modules a CLI run loaded: a preload (through NODE_OPTIONS) that writes,
 * at exit, every file in require.cache and Node's own list of the internal
 * modules it loaded (process.moduleLoadList), one a line. Used to check that a
 * command does not load a library it must not need (undici for a direct GET).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Env additions for runCli that log the run's modules into `<dir>/modules-<n>.txt`; `read()` gives them after the run. */
export function moduleLog(dir: string, name: string): { env: Record<string, string>; read(): string[] } {
  const preload = join(dir, 'module-log-preload.cjs');
  writeFileSync(
    preload,
    `process.on('exit', () => require('node:fs').writeFileSync(process.env.YEP_TEST_MODULE_LOG,
       [...Object.keys(require.cache), ...(process.moduleLoadList ?? [])].join('\\n')));\n`,
  );
  const file = join(dir, `modules-${name}.txt`);
  return {
    env: { NODE_OPTIONS: `--require=${preload}`, YEP_TEST_MODULE_LOG: file },
    read: () => readFileSync(file, 'utf8').split('\n'),
  };
}

/** The lines naming undici: our bundle's lib/undici.cjs, the package, or Node's own bundled copy. */
export const undiciIn = (modules: string[]): string[] => modules.filter((m) => /undici/i.test(m));
