/**
 * The HTTP client's cases (http.cases.ts) again, through the undici
 * transport (the one a proxied request takes, src/core/net/send.ts): both
 * transports must give the same answers, errors and retries.
 */
import { expect, it } from 'vitest';
import { httpCases } from './http.cases.js';

const sentThrough = httpCases('undici');

it('the cases ran through undici (control: the choice reached them)', () => {
  expect(sentThrough()).toBe('undici');
});
