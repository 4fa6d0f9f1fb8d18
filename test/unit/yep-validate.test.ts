import { describe, expect, it } from 'vitest';
import { HookDecision, InitializeResult, StatusChangedParams, UiAskParams } from '../../src/core/yep/protocol.js';
import { decodeLenient, errorProblems, payloadProblems } from '../../src/core/yep/validate.js';

describe('payload conformance', () => {
  it('accepts bare and defaulted payloads, keeps unknown fields', () => {
    expect(payloadProblems('hook/fire', 'result', {})).toEqual([]);
    expect(payloadProblems('initialize', 'result', { future_field: 1 })).toEqual([]);
    expect(errorProblems({ message: 'x' })).toEqual([]);
  });

  it.each([
    ['initialize', 'result', { name: 5 }, 'name'],
    ['initialize', 'result', { capability_params: { tools: [{}] } }, 'capability_params.tools.0.name'],
    ['tool/update', 'params', { request_id: -1 }, 'request_id'],
    ['status/changed', 'params', { level: 'loud' }, 'level'],
    ['cancel', 'params', {}, 'id'],
    ['ui/ask', 'params', { options: 'a,b' }, 'options'],
  ] as const)('%s %s %j breaks the schema at %s', (method, part, value, path) => {
    const problems = payloadProblems(method, part, value);
    expect(problems.join()).toContain(path);
  });

  it('requires message in an error object', () => {
    expect(errorProblems({ code: -32601 }).join()).toContain('message');
  });

  it('does not check methods or parts without a schema (a tool result is opaque)', () => {
    expect(payloadProblems('tool/call', 'result', 42)).toEqual([]);
    expect(payloadProblems('vendor/x', 'params', 42)).toEqual([]);
  });
});

describe('decodeLenient', () => {
  it('fills defaults for missing fields', () => {
    expect(decodeLenient(HookDecision, {}).value).toEqual({ block: false, reason: '', user_message: null });
    expect(decodeLenient(UiAskParams, { prompt: 'q' }).value).toEqual({ prompt: 'q', secret: false });
  });

  it('drops a wrong-typed field to its default and keeps the rest', () => {
    const r = decodeLenient(InitializeResult, { name: 5, protocol_version: '1.0', extra: true });
    expect(r.value).toMatchObject({ name: '', protocol_version: '1.0', extra: true });
    expect(r.dropped.join()).toContain('name');
  });

  it('drops an array item missing a required field', () => {
    const r = decodeLenient(InitializeResult, { capability_params: { tools: [{ name: 'a' }, { nome: 'b' }, { name: 'c' }] } });
    expect(r.value.capability_params?.tools).toEqual([{ name: 'a' }, { name: 'c' }]);
  });

  it('reads an unknown status level as ok', () => {
    expect(decodeLenient(StatusChangedParams, { level: 'loud', status: 'x' }).value).toMatchObject({ level: 'ok', status: 'x' });
  });

  it('falls back to defaults for a non-object', () => {
    expect(decodeLenient(HookDecision, 'nonsense').value).toEqual({ block: false, reason: '', user_message: null });
  });
});
