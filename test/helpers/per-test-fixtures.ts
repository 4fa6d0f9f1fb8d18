/**
 * For a file whose tests run concurrently (describe.concurrent): each test opens its own
 * registry and home, so none waits on another's, and all of them are closed after the file.
 */
import { afterAll } from 'vitest';
import type { TempHome } from './home.js';
import type { TestRegistry } from './registry.js';

/** Call at the top level of a test file; the function it returns records a fixture for closing and gives it back. */
export function closedAfterFile<T extends { reg: TestRegistry; home: TempHome }>(): (fixture: T) => T {
  const opened: T[] = [];
  afterAll(async () => {
    for (const f of opened) {
      await f.reg.close();
      f.home.cleanup();
    }
  });
  return (fixture) => {
    opened.push(fixture);
    return fixture;
  };
}
