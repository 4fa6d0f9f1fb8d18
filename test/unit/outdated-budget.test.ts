/**
 * The fetch budget `outdated` shares between its concurrent engines walks
 * (operations/outdated-engines.ts): a walk is refused only when the budget is really
 * spent by finished fetches, never because other walks merely hold reservations they
 * may give back (docs/info-outdated.md).
 */
import { describe, expect, it } from 'vitest';
import { fetchBudget, release, reserve } from '../../src/core/operations/outdated-engines.js';

/** Settle pending promise callbacks (a reservation that can be granted is granted by then). */
const settle = () => new Promise((r) => setImmediate(r));

describe('outdated fetch budget', () => {
  it('a walk that needs more than is left waits for the walks holding reservations, then gets what they gave back', async () => {
    const budget = fetchBudget(5);
    expect(await reserve(budget, 5)).toBe(true);
    let granted: boolean | undefined;
    void reserve(budget, 3).then((ok) => (granted = ok));
    await settle();
    expect(granted).toBeUndefined(); // waiting, not refused
    expect(budget.waiters).toHaveLength(1);
    release(budget, 5, 1); // the first walk used one fetch of its five
    await settle();
    expect(granted).toBe(true);
    expect(budget).toMatchObject({ left: 1, held: 3 });
  });

  it('is refused once finished fetches used the budget up', async () => {
    const budget = fetchBudget(5);
    expect(await reserve(budget, 5)).toBe(true);
    let granted: boolean | undefined;
    void reserve(budget, 1).then((ok) => (granted = ok));
    await settle();
    expect(granted).toBeUndefined();
    release(budget, 5, 5);
    await settle();
    expect(granted).toBe(false);
    expect(budget).toMatchObject({ left: 0, held: 0 });
  });

  it('several waiting walks are decided in turn as reservations come back', async () => {
    const budget = fetchBudget(4);
    expect(await reserve(budget, 2)).toBe(true);
    expect(await reserve(budget, 2)).toBe(true);
    const results: Array<[string, boolean]> = [];
    void reserve(budget, 3).then((ok) => results.push(['c', ok]));
    void reserve(budget, 1).then((ok) => results.push(['d', ok]));
    await settle();
    expect(results).toEqual([]);
    release(budget, 2, 2); // a: used both; left 0, b still holds 2
    await settle();
    expect(results).toEqual([]);
    release(budget, 2, 0); // b: used none; left 2: c (3) still cannot fit and nobody holds any, d (1) can
    await settle();
    expect(results).toEqual(
      expect.arrayContaining([
        ['c', false],
        ['d', true],
      ]),
    );
    expect(budget).toMatchObject({ left: 1, held: 1 });
  });
});
