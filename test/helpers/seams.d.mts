import type { TestSeams } from '../../src/cli/test-seams.js';

export declare function seamsFromEnv(env: Record<string, string | undefined>): TestSeams;
export declare function withSeams<T extends Record<string, string | undefined>>(env: T): T;
