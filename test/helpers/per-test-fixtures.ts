/**
 * For a file whose tests run concurrently (describe.concurrent): each test opens its own
 * registry and home, so none waits on another's, and all of them are closed after the file.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { makeTempHome, type TempHome } from './home.js';
import { startRegistry, type TestRegistry } from './registry.js';

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

/**
 * One registry serving `fixture` 1.0.0 (`data`) and one home for the whole file, handed to
 * `take` once they are open; faults and the request log are cleared after each test.
 */
export function fixtureRegistryForFile(data: Buffer, take: (reg: TestRegistry, home: TempHome) => void): void {
  let reg: TestRegistry;
  let home: TempHome;
  beforeAll(async () => {
    reg = await startRegistry();
    reg.publish({ name: 'fixture', vers: '1.0.0', data });
    home = makeTempHome();
    take(reg, home);
  });
  afterAll(async () => {
    await reg.close();
    home.cleanup();
  });
  afterEach(() => {
    reg.clearFaults();
    reg.requests.length = 0;
  });
}
