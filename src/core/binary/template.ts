/**
 * cargo-binstall's template language (its `leon` syntax, SUPPORT.md): `{ key }`
 * with or without spaces inside the braces, `\{`, `\}` and `\\` for literal
 * characters. Rendering is total over the keys given; an unknown key or an
 * unbalanced brace is an error naming it (the crate's metadata is wrong, and a
 * guessed URL would be worse than none). Pure.
 */

export type TemplatePart = { text: string } | { key: string };

export class TemplateError extends Error {}

export function parseTemplate(template: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let text = '';
  for (let i = 0; i < template.length; i++) {
    const c = template[i] as string;
    if (c === '\\') {
      const next = template[i + 1];
      if (next === '{' || next === '}' || next === '\\') {
        text += next;
        i++;
        continue;
      }
      text += c;
      continue;
    }
    if (c === '}') throw new TemplateError(`unbalanced "}" at character ${i + 1} of ${JSON.stringify(template)}`);
    if (c !== '{') {
      text += c;
      continue;
    }
    const end = template.indexOf('}', i + 1);
    if (end === -1) throw new TemplateError(`unclosed "{" at character ${i + 1} of ${JSON.stringify(template)}`);
    const key = template.slice(i + 1, end).trim();
    if (!/^[A-Za-z0-9_-]+$/.test(key)) throw new TemplateError(`${JSON.stringify(template.slice(i, end + 1))} is not a template key`);
    if (text) parts.push({ text });
    text = '';
    parts.push({ key });
    i = end;
  }
  if (text) parts.push({ text });
  return parts;
}

export function templateKeys(template: string): string[] {
  return parseTemplate(template).flatMap((p) => ('key' in p ? [p.key] : []));
}

/** Fill every key from `values`; a key without a value is an error. */
export function renderTemplate(template: string, values: Record<string, string | undefined>): string {
  return parseTemplate(template)
    .map((p) => {
      if ('text' in p) return p.text;
      const v = values[p.key];
      if (v === undefined) throw new TemplateError(`the template ${JSON.stringify(template)} uses { ${p.key} }, which has no value here`);
      return v;
    })
    .join('');
}
