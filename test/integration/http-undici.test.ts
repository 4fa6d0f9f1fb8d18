/**
 * Every case of http.test.ts again, through the undici transport (the one a
 * proxied request takes, src/core/net/send.ts): both transports must give the
 * same answers, errors and retries. http.test.ts reads the flag when imported.
 */
import { expect, it } from 'vitest';

(globalThis as Record<symbol, unknown>)[Symbol.for('yep-ext.test.http-via-undici')] = true;
const cases = await import('./http.test.js');

it('the cases ran through undici (control: the flag reached them)', () => {
  expect(cases.TRANSPORT).toBe('undici');
});
