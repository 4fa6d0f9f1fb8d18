import { describe, expect, it } from 'vitest';
import { configFields } from '../../src/core/package/manifest.js';
import { parseManifest } from '../../src/core/package/manifest-validate.js';

const base = { name: 'echo', version: '0.1.0', yolop: { capabilityServer: { command: 'echo-server' }, tools: [{ name: 'echo' }] } };
const text = (v: unknown) => JSON.stringify(v);
const withYolop = (y: Record<string, unknown>) => text({ ...base, yolop: { ...base.yolop, ...y } });

describe('parseManifest (host rules, host-compat §2)', () => {
  it('parses a minimal manifest with defaults', () => {
    const m = parseManifest(text(base), 'x');
    expect(m.yolop.capabilityServer.args).toEqual([]);
    expect(m.yolop.tools[0]).toEqual({ name: 'echo', schema: { type: 'object' }, never_defer: false });
    expect(m.yolop.hooks).toEqual([]);
  });
  it('ignores unknown keys at the top, in yolop and in tools', () => {
    const m = parseManifest(text({ ...base, extra: 1, yolop: { ...base.yolop, future: true, tools: [{ name: 'echo', later: 1 }] } }), 'x');
    expect(m.name).toBe('echo');
  });
  it('defaults hooks: glob "*", 5000 ms, warn', () => {
    const m = parseManifest(withYolop({ hooks: [{ event: 'pre_tool_use' }] }), 'x');
    expect(m.yolop.hooks[0]).toEqual({ event: 'pre_tool_use', tool_name_glob: '*', timeout_ms: 5000, on_error: 'warn' });
  });
  it('reads mcpServers as a map and infers http from url', () => {
    const m = parseManifest(withYolop({ mcpServers: { docs: { url: 'https://x' }, local: { command: 'srv', args: ['-v'] } } }), 'x');
    expect(m.yolop.mcpServers.docs?.type).toBe('http');
    expect(m.yolop.mcpServers.local).toMatchObject({ type: 'stdio', command: 'srv', args: ['-v'] });
  });
  it('reads config fields with secret and env', () => {
    const m = parseManifest(
      withYolop({
        config_schema: {
          type: 'object',
          required: ['token'],
          properties: { token: { type: 'string', secret: true, env: 'TOKEN' }, mode: { type: 'string', enum: ['a', 'b'] } },
        },
      }),
      'x',
    );
    expect(configFields(m)).toMatchObject([
      { key: 'token', secret: true, env: 'TOKEN', required: true },
      { key: 'mode', secret: false, required: false, enum: ['a', 'b'] },
    ]);
  });

  it.each([
    ['no name', text({ yolop: base.yolop }), 'name: is required'],
    ['bad name', text({ ...base, name: '../x' }), 'must match'],
    ['full-width name', text({ ...base, name: 'ｌｓｐ' }), 'must match'],
    ['no yolop', text({ name: 'x' }), 'yolop: is required'],
    ['no command', text({ ...base, yolop: { tools: [{ name: 't' }], capabilityServer: {} } }), 'command: is required'],
    ['empty command', text({ ...base, yolop: { tools: [{ name: 't' }], capabilityServer: { command: ' ' } } }), 'command: is required'],
    ['nothing contributed', text({ ...base, yolop: { capabilityServer: { command: 'x' } } }), 'contributes nothing'],
    ['ui_ask alone', text({ ...base, yolop: { capabilityServer: { command: 'x' }, ui_ask: true } }), 'contributes nothing'],
    ['unknown hook key', withYolop({ hooks: [{ event: 'pre_tool_use', when: 'x' }] }), 'hooks[0].when: unknown key'],
    ['bad hook event', withYolop({ hooks: [{ event: 'on_boot' }] }), 'must be one of'],
    ['unknown mcp key', withYolop({ mcpServers: { a: { command: 'x', shell: true } } }), 'mcpServers.a.shell: unknown key'],
    ['stdio without command', withYolop({ mcpServers: { a: { type: 'stdio' } } }), 'required for a stdio server'],
    ['unknown command key', withYolop({ commands: [{ name: 'go', run: 'x' }] }), 'commands[0].run: unknown key'],
    ['bad command name', withYolop({ commands: [{ name: 'a b' }] }), 'commands[0].name'],
    ['protocol major 2', withYolop({ protocol_version: '2.0' }), 'major 2 is not supported'],
    ['duplicate keys', '{"name":"a","name":"b","yolop":{}}', 'duplicate key "name"'],
    ['BOM', `\ufeff${text(base)}`, 'byte-order mark'],
    ['NUL', text(base).replace('echo', 'ec\u0000ho'), 'NUL'],
    ['not JSON', '{name: 1}', 'invalid JSON'],
    ['deep nesting', `{"name":"a","x":${'['.repeat(100)}${']'.repeat(100)}}`, 'nested deeper'],
    ['array at top', '[]', 'must hold a JSON object'],
  ])('%s -> clear error', (_label, body, message) => {
    expect(() => parseManifest(body, 'pkg')).toThrow(message);
  });

  it('reports every problem at once', () => {
    try {
      parseManifest(text({ name: '../x', yolop: { capabilityServer: {}, hooks: [{ event: 'x' }] } }), 'pkg');
      expect.unreachable();
    } catch (e) {
      const problems = (e as { details: { problems: string[] } }).details.problems;
      expect(problems.length).toBeGreaterThanOrEqual(3);
    }
  });
});
