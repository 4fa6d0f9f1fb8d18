import { describe, expect, it } from 'vitest';
import { YepError } from '../../src/core/errors.js';
import { defaultSecretEnv, parseConfigFlag, parseHookFlag, parseScaffoldRequest } from '../../src/scaffold/request.js';

function refusal(fn: () => unknown): YepError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(YepError);
    return e as YepError;
  }
  throw new Error('expected a refusal');
}

describe('parseScaffoldRequest', () => {
  it('defaults: typescript, no facets beyond the requested ones', () => {
    expect(parseScaffoldRequest({ name: 'w', tools: ['a'] })).toEqual({
      name: 'w',
      language: 'typescript',
      tools: ['a'],
      hooks: [],
      commands: [],
      dynamicPrompt: false,
      status: false,
      skills: false,
      config: [],
    });
  });

  it('takes the crate spelling as the extension name', () => {
    expect(parseScaffoldRequest({ name: 'yolop-extension-lsp', status: true }).name).toBe('lsp');
    // The bare prefix alone is a (valid) name of its own.
    expect(parseScaffoldRequest({ name: 'yolop-extension-', status: true }).name).toBe('yolop-extension-');
  });

  it.each([[''], ['a b'], ['../x'], ['a/b'], ['x'.repeat(129)], ['é']])('refuses the name %j (E_NAME)', (name) => {
    expect(refusal(() => parseScaffoldRequest({ name, tools: ['t'] })).code).toBe('E_NAME');
  });

  it('refuses bad or duplicate tool and command names', () => {
    expect(refusal(() => parseScaffoldRequest({ name: 'x', tools: ['a.b'] })).message).toContain('Invalid tool name "a.b"');
    expect(refusal(() => parseScaffoldRequest({ name: 'x', commands: ['a:b'] })).message).toContain('Invalid command name "a:b"');
    expect(refusal(() => parseScaffoldRequest({ name: 'x', tools: ['a', 'a'] })).message).toBe('--tool a is given twice.');
    expect(refusal(() => parseScaffoldRequest({ name: 'x', commands: ['c', 'c'] })).message).toBe('--command c is given twice.');
    expect(refusal(() => parseScaffoldRequest({ name: 'x', hooks: ['pre_tool_use', 'pre_tool_use:*'] })).message).toContain('given twice');
    expect(refusal(() => parseScaffoldRequest({ name: 'x', status: true, config: ['a', 'a:secret'] })).message).toContain('--config a is given twice');
  });

  it('a request that contributes nothing gets one sample tool named after the extension', () => {
    for (const input of [{ name: 'x' }, { name: 'x', config: ['token:secret'] }, { name: 'x', tools: [], hooks: [], dynamicPrompt: false }]) {
      const spec = parseScaffoldRequest(input);
      expect(spec.tools).toEqual(['x']);
      expect(spec.sampleTool).toBe(true);
    }
    expect(parseScaffoldRequest({ name: 'yolop-extension-weather' }).tools).toEqual(['weather']);
    expect(parseScaffoldRequest({ name: 'x', status: true }).sampleTool).toBeUndefined();
  });

  it.each([
    ['ts', 'typescript'],
    ['TS', 'typescript'],
    ['py', 'python'],
    ['rs', 'rust'],
    ['rust', 'rust'],
  ])('--language %s means %s', (given, language) => {
    expect(parseScaffoldRequest({ name: 'x', language: given, tools: ['t'] }).language).toBe(language);
  });

  it.each([
    [{ tools: ['t'] }],
    [{ hooks: ['post_tool_use'] }],
    [{ commands: ['c'] }],
    [{ prompt: 'p' }],
    [{ dynamicPrompt: true }],
    [{ status: true }],
    [{ skills: true }],
  ])('accepts a single contribution: %j', (facet) => {
    expect(() => parseScaffoldRequest({ name: 'x', ...facet })).not.toThrow();
  });

  it('refuses an unknown language and the binary names cargo reserves (rust only)', () => {
    expect(refusal(() => parseScaffoldRequest({ name: 'x', tools: ['t'], language: 'go' })).message).toContain('--language "go" is not supported');
    for (const name of ['build', 'deps', 'examples', 'incremental']) {
      expect(refusal(() => parseScaffoldRequest({ name, tools: ['t'], language: 'rust' })).message).toContain('Cargo reserves');
      expect(parseScaffoldRequest({ name, tools: ['t'], language: 'python' }).name).toBe(name);
    }
  });

  it('prompt text: tabs, newlines and any Unicode are fine; empty, control characters, lone surrogates and huge text are not', () => {
    expect(parseScaffoldRequest({ name: 'x', prompt: 'a\tb\n"c" \\ 😀' }).prompt).toBe('a\tb\n"c" \\ 😀');
    expect(refusal(() => parseScaffoldRequest({ name: 'x', prompt: '  \n' })).message).toBe('--prompt is empty.');
    expect(refusal(() => parseScaffoldRequest({ name: 'x', prompt: 'bell\u0007' })).message).toContain('control characters');
    expect(refusal(() => parseScaffoldRequest({ name: 'x', prompt: 'esc\u001b[31m' })).message).toContain('control characters');
    expect(refusal(() => parseScaffoldRequest({ name: 'x', prompt: 'half \ud83d pair' })).message).toContain('invalid Unicode');
    expect(refusal(() => parseScaffoldRequest({ name: 'x', prompt: 'y'.repeat(64 * 1024 + 1) })).message).toContain('characters long');
  });
});

describe('parseHookFlag', () => {
  it('event alone means every tool; event:GLOB narrows it', () => {
    expect(parseHookFlag('pre_tool_use')).toEqual({ event: 'pre_tool_use', glob: '*' });
    expect(parseHookFlag('post_tool_use:git_*')).toEqual({ event: 'post_tool_use', glob: 'git_*' });
    expect(parseHookFlag('pre_tool_use:mcp__srv__*')).toEqual({ event: 'pre_tool_use', glob: 'mcp__srv__*' });
  });

  it.each([
    ['on_start', /unknown event "on_start"/],
    ['PRE_TOOL_USE', /unknown event/],
    ['', /unknown event ""/],
    ['pre_tool_use:', /glob after ":" is empty/],
    ['pre_tool_use:ba?h', /not a tool-name glob/],
    ['pre_tool_use:[ab]', /not a tool-name glob/],
    ['pre_tool_use:a b', /not a tool-name glob/],
    [`pre_tool_use:${'a'.repeat(129)}`, /not a tool-name glob/],
  ])('refuses %j', (text, message) => {
    const e = refusal(() => parseHookFlag(text));
    expect(e.code).toBe('E_USAGE');
    expect(e.message).toMatch(message);
    expect(e.hint).toContain('--hook pre_tool_use or --hook post_tool_use:GLOB');
  });
});

describe('parseConfigFlag', () => {
  it('FIELD, FIELD:secret, FIELD:env=NAME, in any order', () => {
    expect(parseConfigFlag('endpoint', 'x')).toEqual({ key: 'endpoint', secret: false });
    expect(parseConfigFlag('region:env=AWS_REGION', 'x')).toEqual({ key: 'region', secret: false, env: 'AWS_REGION' });
    expect(parseConfigFlag('token:secret:env=TOKEN', 'x')).toEqual({ key: 'token', secret: true, env: 'TOKEN' });
    expect(parseConfigFlag('token:env=TOKEN:secret', 'x')).toEqual({ key: 'token', secret: true, env: 'TOKEN' });
  });

  it('a secret without env= gets <NAME>_<FIELD>: the host hands secrets over only as environment variables', () => {
    expect(parseConfigFlag('api-key:secret', 'my-ext')).toEqual({ key: 'api-key', secret: true, env: 'MY_EXT_API_KEY', envDerived: true });
    expect(defaultSecretEnv('1st', 'token')).toBe('EXT_1ST_TOKEN');
  });

  it.each([
    ['', /field name "" must match/],
    [':secret', /field name "" must match/],
    ['to ken', /field name "to ken" must match/],
    ['token:secrt', /"secrt" is not understood/],
    ['token:secret:secret', /"secret" is not understood \(given twice\)/],
    ['token:env=A:env=B', /"env=B" is not understood \(given twice\)/],
    ['token:env=', /"" is not an environment variable name/],
    ['token:env=1X', /"1X" is not an environment variable name/],
    ['token:env=A-B', /"A-B" is not an environment variable name/],
    ['token:required', /"required" is not understood/],
  ])('refuses %j', (text, message) => {
    const e = refusal(() => parseConfigFlag(text, 'x'));
    expect(e.code).toBe('E_USAGE');
    expect(e.message).toMatch(message);
    expect(e.hint).toContain('FIELD[:secret][:env=NAME]');
  });
});
