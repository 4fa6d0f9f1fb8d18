/**
 * Config values against an extension's `config_schema` (host-compat §2): text
 * from `--config key=value` or a prompt is typed by the field's schema (a port is
 * an integer in settings.toml, not a string), then validated with ajv. The yolop
 * keywords `secret` and `env` are declared to ajv so strict schemas compile.
 * Messages never include a secret's value.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { YepError } from '../errors.js';
import type { ConfigField } from '../package/manifest.js';

let ajv: Ajv | undefined;
const compiled = new WeakMap<Record<string, unknown>, ValidateFunction>();

function getAjv(): Ajv {
  if (!ajv) {
    // strict: false because authors use keywords and formats we do not know; logger:
    // false because core never prints (ajv would warn about unknown formats on stderr).
    ajv = new Ajv({ strict: false, allErrors: true, logger: false, validateSchema: false });
    ajv.addKeyword({ keyword: 'secret', schemaType: 'boolean' });
    ajv.addKeyword({ keyword: 'env', schemaType: 'string' });
    ajv.addFormat('uri', (s: string) => {
      try {
        return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(s) && Boolean(new URL(s));
      } catch {
        return false;
      }
    });
    ajv.addFormat('email', /^[^\s@]+@[^\s@]+$/);
  }
  return ajv;
}

function validatorFor(field: ConfigField, extension: string): ValidateFunction {
  const hit = compiled.get(field.schema);
  if (hit) return hit;
  // $schema/$id would make ajv fetch or register meta-schemas; a property schema needs neither.
  const { $schema: _s, $id: _i, ...schema } = field.schema;
  let fn: ValidateFunction;
  try {
    fn = getAjv().compile(schema);
  } catch (e) {
    throw new YepError(
      'E_MANIFEST',
      `${extension}: config_schema.properties.${field.key} is not a JSON Schema yep-ext can check: ${(e as Error).message.split('\n')[0]}.`,
      {
        hint: 'The extension author should fix config_schema (yolop does not resolve $ref either).',
      },
    );
  }
  compiled.set(field.schema, fn);
  return fn;
}

function describeError(key: string, e: ErrorObject): string {
  const where = e.instancePath ? `${key}${e.instancePath.replace(/\/(\d+)/g, '[$1]').replace(/\//g, '.')}` : key;
  const allowed = e.keyword === 'enum' ? `: ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}` : '';
  return `${where} ${e.message ?? 'is invalid'}${allowed}`;
}

/** Problems with `value` for `field` (empty = valid). Secret values are never quoted. */
function checkConfigValue(field: ConfigField, value: unknown, extension: string): string[] {
  const fn = validatorFor(field, extension);
  if (fn(value)) return [];
  return (fn.errors ?? []).map((e) => describeError(field.key, e));
}

/** Throw E_USAGE unless `value` satisfies the field's schema. */
export function assertConfigValue(field: ConfigField, value: unknown, extension: string): void {
  const problems = checkConfigValue(field, value, extension);
  if (problems.length === 0) return;
  throw new YepError('E_USAGE', `Invalid value for ${extension}.${field.key}: ${problems.join('; ')}.`, {
    hint: fieldHint(field),
    details: { field: field.key, problems },
  });
}

/** What a field accepts, for hints and prompts. */
function fieldHint(field: ConfigField): string {
  const parts: string[] = [];
  if (field.enum) parts.push(`one of ${field.enum.join(', ')}`);
  else if (field.type) parts.push(`a${/^[aeiou]/.test(field.type) ? 'n' : ''} ${field.type}`);
  // The sentence ends with its own period: a description's final one would double it ("for..").
  const description = field.description?.trim().replace(/[.\s]+$/, '');
  if (description) parts.push(description);
  return `${field.key} expects ${parts.join(' - ') || 'a value'}.`;
}

function schemaTypes(field: ConfigField): string[] {
  const t = field.schema.type;
  if (typeof t === 'string') return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === 'string');
  return [];
}

const INTEGER_RE = /^[+-]?\d+$/;
const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function coerceScalar(type: string | undefined, raw: string): { ok: true; value: unknown } | { ok: false } {
  const s = raw.trim();
  switch (type) {
    case 'integer':
      return INTEGER_RE.test(s) && Number.isSafeInteger(Number(s)) ? { ok: true, value: Number(s) } : { ok: false };
    case 'number':
      return NUMBER_RE.test(s) && Number.isFinite(Number(s)) ? { ok: true, value: Number(s) } : { ok: false };
    case 'boolean':
      return s === 'true' ? { ok: true, value: true } : s === 'false' ? { ok: true, value: false } : { ok: false };
    case 'string':
    case undefined:
      return { ok: true, value: raw };
    default:
      return { ok: false };
  }
}

function parseJson(raw: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * Type the text of a non-secret value by the field's schema: integers and numbers
 * become numbers, `true`/`false` booleans, arrays come as JSON (`["a","b"]`) or
 * comma-separated (`a,b`), objects as JSON. Untyped fields stay strings.
 */
export function coerceConfigValue(field: ConfigField, raw: string, extension: string): unknown {
  const types = schemaTypes(field);
  const order = types.length === 0 ? ['string'] : ['boolean', 'integer', 'number', 'array', 'object', 'string'].filter((t) => types.includes(t));
  for (const type of order) {
    if (type === 'array') {
      const t = raw.trim();
      if (t.startsWith('[')) {
        const j = parseJson(t);
        if (j.ok && Array.isArray(j.value)) return j.value;
        continue;
      }
      const items = field.schema.items as { type?: unknown } | undefined;
      const itemType = typeof items?.type === 'string' ? items.type : undefined;
      const parts = t === '' ? [] : t.split(',').map((p) => p.trim());
      const typed = parts.map((p) => coerceScalar(itemType, p));
      if (typed.every((x) => x.ok)) return typed.map((x) => (x as { value: unknown }).value);
      continue;
    }
    if (type === 'object') {
      const j = parseJson(raw.trim());
      if (j.ok && typeof j.value === 'object' && j.value !== null && !Array.isArray(j.value)) return j.value;
      continue;
    }
    const r = coerceScalar(type, raw);
    if (r.ok) return r.value;
  }
  const expected = types.join(' or ') || 'a value';
  throw new YepError(
    'E_USAGE',
    `Invalid value for ${extension}.${field.key}: expected ${expected}${field.secret ? '' : `, got ${JSON.stringify(raw.slice(0, 80))}`}.`,
    {
      hint: fieldHint(field) + (types.includes('array') ? ' Give arrays as a,b,c or as JSON ["a","b"].' : ''),
    },
  );
}

/** Split `key=value` (the value may contain `=`). */
export function parseAssignment(text: string): { key: string; raw: string } {
  const i = text.indexOf('=');
  if (i <= 0) {
    // Not repeated: a word without `key=` may be the value alone (a secret typed where a setting belongs).
    throw new YepError('E_USAGE', `--config expects key=value; got a word without a key (not repeated here: it may be a value).`, {
      hint: 'For example: --config endpoint=https://example.com --config port=8080',
    });
  }
  return { key: text.slice(0, i).trim(), raw: text.slice(i + 1) };
}

/**
 * Check text typed at a prompt the way it will be stored: secrets as the string
 * itself, other fields typed by the schema first. True, or the message to show.
 */
export function checkTypedText(field: ConfigField, raw: string, extension: string): true | string {
  if (field.secret) {
    if (raw.length === 0) return 'A value is required.';
    const problems = checkConfigValue(field, raw, extension);
    return problems.length === 0 ? true : problems.join('; ');
  }
  try {
    const problems = checkConfigValue(field, coerceConfigValue(field, raw, extension), extension);
    return problems.length === 0 ? true : problems.join('; ');
  } catch (e) {
    return e instanceof YepError ? e.message : String(e);
  }
}
