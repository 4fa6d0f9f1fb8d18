/** The example extensions (README quick start) pass doctor with no failure and no warning, and do what they say. */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/core/doctor/doctor.js';
import { YepClient } from '../../src/core/yep/client.js';
import { REPO_ROOT, makeTempHome } from '../helpers/home.js';

const home = makeTempHome('yep-examples-');
afterAll(() => home.cleanup());
// The Python example's `#!/usr/bin/env python3` must find the system interpreter (/usr/bin/python3),
// not a pyenv shim, a shell script run on every start.
const env = { PATH: `/usr/bin:${home.env.PATH}` };

describe.each([
  ['echo-node', 'echo', { text: 'hi', repeat: 3 }],
  ['echo-python', 'py_echo', { text: 'hi', repeat: 3 }],
])('examples/%s', (name, tool, args) => {
  it('passes doctor with every check green, including a streamed tool call', async () => {
    const r = await runDoctor(home.ctx(env), {
      target: { kind: 'path', dir: join(REPO_ROOT, 'examples', name) },
      workspaceRoot: home.root,
      call: { tool, args },
    });
    expect(r.checks.filter((c) => c.status !== 'pass')).toEqual([]);
    expect(r.call).toMatchObject({ updates: ['1/3: hi', '2/3: hi'], result: { content: [{ type: 'text', text: 'hi' }] } });
  });
});

describe('examples/echo-node behaviour', () => {
  it('honours cancel, blocks rm -rf / in its hook, runs its command with the env-mapped greeting', async () => {
    const dir = join(REPO_ROOT, 'examples', 'echo-node');
    const c = YepClient.start({
      command: join(dir, 'bin', 'echo-node'),
      packageDir: dir,
      workspaceRoot: home.root,
      env: { ...home.env, ...env },
      injectedEnv: { ECHO_NODE_GREETING: 'Howdy' },
    });
    try {
      await c.initialize();
      const call = c.callTool('echo', { text: 'x', repeat: 20 });
      await new Promise((r) => setTimeout(r, 60));
      expect(await c.cancel(call.id)).toEqual({ cancelled: true, supported: true });
      await expect(call.result).rejects.toMatchObject({ kind: 'cancelled' });
      expect(await c.request('hook/fire', { event: 'pre_tool_use', tool_name: 'bash', args: { command: 'rm -rf /' } })).toMatchObject({ block: true });
      expect(await c.request('command/execute', { name: 'hello', arguments: 'Ada' })).toEqual({ success: true, message: 'Howdy, Ada!' });
    } finally {
      await c.stop({ graceMs: 500 });
    }
  });
});
