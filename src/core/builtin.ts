/**
 * A Node built-in loaded on first use, for what most runs never need (crypto when nothing is
 * hashed, child_process when nothing is started, TLS when nothing is sent, tty when no stream
 * is a terminal): loading one costs milliseconds at start-up. A require made from any absolute
 * path resolves a built-in, in the ES module sources and the CommonJS bundle alike (which
 * compiles without a dynamic-import hook).
 */
import { createRequire } from 'node:module';

let load: NodeJS.Require | undefined;

export function builtin<T>(name: `node:${string}`): T {
  load ??= createRequire(process.execPath);
  return load(name) as T;
}
