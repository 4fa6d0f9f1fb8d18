/**
 * Every process yep-ext starts goes through the run's spawner (ctx.spawn): the
 * agent's `yolop --version` too, so a library caller's or a test's spawner sees it
 * and the real agent (a fake one here, a shell script) answers through it.
 */
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { detectAgentVersion } from '../../src/core/agent/agent-version.js';
import { createContext, type Spawn } from '../../src/core/context.js';
import { systemSpawn } from '../../src/core/spawn.js';
import { fakeAgent, pathWithoutAgent } from '../helpers/fake-agent.js';
import { makeTempHome, type TempHome } from '../helpers/home.js';

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

it("asks the agent its version through the run's spawner", async () => {
  home = makeTempHome('yep-agent-spawn-');
  const agent = fakeAgent(join(home.root, 'agent'), '0.18.2');
  const seen: string[][] = [];
  const spawn: Spawn = (command, args, options) => {
    seen.push([command, ...args]);
    return systemSpawn(command, args, options);
  };
  const ctx = createContext({ env: { ...home.env, PATH: pathWithoutAgent(), YOLOP_BIN: agent.bin }, spawn });
  const found = await detectAgentVersion(ctx);
  expect(found).toMatchObject({ known: true, version: '0.18.2' });
  expect(seen).toEqual([[agent.bin, '--version']]);
  expect(agent.runs()).toBe(1);
});
