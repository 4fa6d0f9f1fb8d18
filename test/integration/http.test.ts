/** The HTTP client's cases (http.cases.ts) through the node:http transport. */
import { expect, it } from 'vitest';
import { httpCases } from './http.cases.js';

const sentThrough = httpCases('node:http');

it('the cases ran through node:http (control: the choice reached them)', () => {
  expect(sentThrough()).toBe('node:http');
});
