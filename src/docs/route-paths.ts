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

/** Every concrete variant of a template, without duplicate shapes: of `random/{source}` and `random/{bytes}`
 * the earlier parameter wins, as the router's regex fills optional parts left to right. */
export function pathVariants(template: string): PathVariant[] {
  const order = [...template.matchAll(/[:*](\w+)/g)].map((m) => m[1]!);
  const rank = (params: string[]) => params.reduce((sum, p) => sum + order.indexOf(p), 0);
  const byShape = new Map<string, PathVariant>();
  for (const raw of expand(parse(template).parts)) {
    const params: string[] = [];
    const path = raw.replace(/[:*](\w+)/g, (_m, n: string) => {
      params.push(n);
      return `{${n}}`;
    });
    const shape = path.replace(/\{\w+\}/g, '{}');
    const prev = byShape.get(shape);
    if (!prev || rank(params) < rank(prev.params)) byShape.set(shape, { path, params });
  }
  return [...byShape.values()];
}

/** A template for people: `keys/:name` -> `keys/NAME`, optional parts kept in brackets (`random[/SOURCE][/BYTES]`). */
export function humanPath(template: string): string {
  return template
    .replace(/\(/g, '[')
    .replace(/\)/g, ']')
    .replace(/[:*](\w+)/g, (_m, n: string) => n.toUpperCase());
}
