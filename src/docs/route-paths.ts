/**
 * Concrete shapes of route path templates for documents: `random(/:source)(/:bytes)` expands to every
 * combination of its optional parts; `:name` and `*path` become `{name}` and `{path}`.
 */

/** One concrete variant of a template: `keys/{name}` and the parameter names it carries. */
export interface PathVariant {
  path: string;
  params: string[];
}

type Part = { kind: 'text'; text: string } | { kind: 'opt'; parts: Part[] };

function parse(template: string, start = 0): { parts: Part[]; end: number } {
  const parts: Part[] = [];
  let text = '';
  let i = start;
  for (; i < template.length; i++) {
    const c = template[i]!;
    if (c === '(') {
      if (text) parts.push({ kind: 'text', text });
      text = '';
      const inner = parse(template, i + 1);
      parts.push({ kind: 'opt', parts: inner.parts });
      i = inner.end;
    } else if (c === ')') {
      break;
    } else text += c;
  }
  if (text) parts.push({ kind: 'text', text });
  return { parts, end: i };
}

function expand(parts: Part[]): string[] {
  let acc = [''];
  for (const p of parts) {
    if (p.kind === 'text') acc = acc.map((a) => a + p.text);
    else {
      const inner = expand(p.parts);
      acc = acc.flatMap((a) => [a, ...inner.map((x) => a + x)]);
    }
  }
  return acc;
}

/** Every concrete variant of a template, without duplicate shapes (`random/{source}` vs `random/{bytes}`). */
export function pathVariants(template: string): PathVariant[] {
  const seen = new Set<string>();
  const out: PathVariant[] = [];
  for (const raw of expand(parse(template).parts)) {
    const params: string[] = [];
    const path = raw.replace(/[:*](\w+)/g, (_m, n: string) => {
      params.push(n);
      return `{${n}}`;
    });
    const shape = path.replace(/\{\w+\}/g, '{}');
    if (seen.has(shape)) continue;
    seen.add(shape);
    out.push({ path, params });
  }
  return out;
}

/** A template for people: `keys/:name` -> `keys/NAME`, optional parts kept in brackets (`random[/SOURCE][/BYTES]`). */
export function humanPath(template: string): string {
  return template.replace(/\(/g, '[').replace(/\)/g, ']').replace(/[:*](\w+)/g, (_m, n: string) => n.toUpperCase());
}
