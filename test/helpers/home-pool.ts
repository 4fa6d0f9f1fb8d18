/**
 * Temp homes made during a file and removed together (`afterAll(pool.cleanup)`),
 * for tests that compare several homes (an origin and its mirror installs, two
 * homes sharing one download cache).
 */
import { makeTempHome, type TempHome } from './home.js';

export interface HomePool {
  /** A fresh temp home, removed by `cleanup`. */
  make(prefix?: string): TempHome;
  cleanup(): void;
}

export function homePool(): HomePool {
  const homes: TempHome[] = [];
  return {
    make(prefix) {
      const h = makeTempHome(prefix);
      homes.push(h);
      return h;
    },
    cleanup() {
      for (const h of homes.splice(0)) h.cleanup();
    },
  };
}
