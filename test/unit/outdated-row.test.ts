/**
 * `outdated`'s row from what the origin offers and what the engines walk found
 * (pure): the status follows the versions the agent can run (update > beyond >
 * held), the hint installs the newest runnable one, a walk that did not check
 * leaves the index's answer; and the one install-spec builder names the installed
 * crate (the short name only for yolop-extension-<name>).
 */
import { describe, expect, it } from 'vitest';
import { outdatedRow, anyOutdated, type NewerEngines } from '../../src/core/operations/outdated.js';
import { crateInstallSpec, requirementFor } from '../../src/core/sources/crate-install-spec.js';
import type { LockEntry } from '../../src/core/store/lockfile.js';
import type { Upstream } from '../../src/core/sources/source.js';

const entry = (crate = 'yolop-extension-hello'): LockEntry => ({
  name: 'hello',
  content_hash: 'sha256:00',
  version: '0.3.0',
  source: { type: 'crate', crate_name: crate, version: '0.3.0', requirement: '^0.3' } as LockEntry['source'],
});
// ^0.3 at 0.3.0: 0.3.5 inside, 0.4.0 and 0.5.0 outside.
const up: Upstream = {
  wanted: '0.3.5',
  latest: '0.5.0',
  update: true,
  beyond: true,
  versions: [],
  candidates: [],
  outside: { version: '0.5.0', requirement: '^0.3' },
  notes: [],
};
const walk = (w: Partial<NewerEngines>): NewerEngines => ({
  status: 'checked',
  agent: '0.12.1',
  runnable: null,
  runnable_in_requirement: null,
  needs_newer_agent: [],
  tried: 3,
  candidates: 3,
  detail: '',
  ...w,
});

describe('outdatedRow with the engines walk', () => {
  it('a runnable version inside the requirement: update (whatever is outside)', () => {
    const row = outdatedRow(entry(), up, null, walk({ runnable: '0.4.0', runnable_in_requirement: '0.3.5' }));
    expect(row).toMatchObject({ status: 'update', hint: 'yep-ext update hello', wanted: '0.3.5', latest: '0.5.0' });
    // The newest runnable outside the requirement is named beside the update, as `update` names it.
    expect(row.newer_outside).toEqual({ version: '0.4.0', requirement: '^0.3', spec: 'hello@^0.4' });
    expect(anyOutdated([row])).toBe(true);
  });

  it('runnable only outside it: beyond, the hint installs the newest runnable (not latest)', () => {
    const row = outdatedRow(entry(), up, null, walk({ runnable: '0.4.0', needs_newer_agent: [{ version: '0.5.0', requires: '>=0.13', reason: 'r' }] }));
    expect(row).toMatchObject({ status: 'beyond', hint: 'yep-ext install hello@^0.4', newer_outside: { version: '0.4.0', spec: 'hello@^0.4' } });
    expect(anyOutdated([row])).toBe(true);
  });

  it('nothing runnable: held, no hint, not outdated', () => {
    const row = outdatedRow(entry(), up, null, walk({}));
    expect(row).toMatchObject({ status: 'held', hint: null });
    expect(anyOutdated([row])).toBe(false);
  });

  it('unknown agent or a failed walk: the index decides', () => {
    for (const status of ['unknown-agent', 'failed'] as const) {
      const row = outdatedRow(entry(), up, null, walk({ status }));
      expect(row).toMatchObject({ status: 'update', hint: 'yep-ext update hello', newer_engines: { status } });
    }
    expect(outdatedRow(entry(), up, null).newer_engines).toBeNull();
  });

  it('a crate not named yolop-extension-<name> is named as installed', () => {
    const row = outdatedRow(entry('some-crate'), { ...up, update: false, wanted: '0.3.0' }, null);
    expect(row).toMatchObject({ status: 'beyond', hint: 'yep-ext install crates.io:some-crate@^0.5' });
  });
});

describe('crateInstallSpec / requirementFor', () => {
  it("short name only for the extension's own yolop-extension- crate", () => {
    expect(crateInstallSpec('hello', 'yolop-extension-hello', '2')).toBe('hello@2');
    expect(crateInstallSpec('hello', 'yolop-extension-other', '2')).toBe('crates.io:yolop-extension-other@2');
    expect(crateInstallSpec('custom', 'custom-name', '^2.0.0')).toBe('crates.io:custom-name@^2.0.0');
  });
  it('cargo caret line of a version, caret written out', () => {
    expect([requirementFor('2.1.0'), requirementFor('0.4.3'), requirementFor('0.0.7'), requirementFor('garbage')]).toEqual([
      '^2',
      '^0.4',
      '^0.0.7',
      '=garbage',
    ]);
  });
});
