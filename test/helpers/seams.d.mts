import type { TestSeams } from '../../src/cli/test-seams.js';

/** `name=address,…` -> Map(lower-case name -> address); malformed pairs are ignored. */
export declare function parseResolve(text: string | undefined): Map<string, string>;
export declare function seamsFromEnv(env: Record<string, string | undefined>): TestSeams;
export declare function withSeams<T extends Record<string, string | undefined>>(env: T): T;
