/**
 * Secret name templates: the Go-template subset Vault documents for `secret_name_template`
 * (reference sync-wire.md 1.6): `{{ .Field }}`, pipes `{{ .SecretPath | uppercase }}`, function calls
 * `{{ replace "/" "_" .SecretPath }}` or piped `{{ .SecretPath | replace "/" "_" }}` (the piped value
 * becomes the last argument, as in Go).
 */
import { TemplateError } from '../framework/errors.js';

/** The one TemplateError (framework/errors.ts), re-exported for this module's callers. */
export { TemplateError } from '../framework/errors.js';

/** Placeholders a template may use (reference 1.6). */
export const TEMPLATE_FIELDS = [
  'DestinationType',
  'DestinationName',
  'NamespacePath',
  'NamespaceBaseName',
  'NamespaceID',
  'MountPath',
  'MountBaseName',
  'MountAccessor',
  'SecretPath',
  'SecretBaseName',
  'SecretKey',
] as const;

/** One placeholder name. */
export type TemplateField = (typeof TEMPLATE_FIELDS)[number];

/** Values of the placeholders for one rendering. */
export type TemplateVars = Partial<Record<TemplateField, string>>;

/** Template functions: name -> (arity, implementation; the piped value is the last argument). */
const FUNCTIONS: Record<string, { arity: number; fn: (...a: string[]) => string }> = {
  uppercase: { arity: 1, fn: (s) => s.toUpperCase() },
  lowercase: { arity: 1, fn: (s) => s.toLowerCase() },
  replace: { arity: 3, fn: (from, to, s) => s.split(from).join(to) },
  trimPrefix: { arity: 2, fn: (p, s) => (s.startsWith(p) ? s.slice(p.length) : s) },
  trimSuffix: { arity: 2, fn: (p, s) => (p && s.endsWith(p) ? s.slice(0, -p.length) : s) },
};

type Operand = { field: TemplateField } | { literal: string };
type Command = { fn: string; args: Operand[] } | { value: Operand };
type Part = string | Command[];

/** A parsed template. */
export class NameTemplate {
  private constructor(
    readonly source: string,
    private readonly parts: Part[],
    readonly fields: ReadonlySet<TemplateField>,
  ) {}

  /** Parse and check a template; throws TemplateError naming the problem. */
  static parse(source: string): NameTemplate {
    const parts: Part[] = [];
    const fields = new Set<TemplateField>();
    let pos = 0;
    while (pos < source.length) {
      const open = source.indexOf('{{', pos);
      if (open === -1) {
        parts.push(source.slice(pos));
        break;
      }
      if (open > pos) parts.push(source.slice(pos, open));
      const close = source.indexOf('}}', open + 2);
      if (close === -1) throw new TemplateError('unclosed action "{{"');
      parts.push(parsePipeline(source.slice(open + 2, close).trim(), fields));
      pos = close + 2;
    }
    if (source.includes('}}') && !parts.some((p) => typeof p !== 'string')) throw new TemplateError('unexpected "}}"');
    return new NameTemplate(source, parts, fields);
  }

  /** Render with the given values (a missing value renders as ""). */
  render(vars: TemplateVars): string {
    let out = '';
    for (const p of this.parts) {
      if (typeof p === 'string') {
        out += p;
        continue;
      }
      let piped: string | undefined;
      for (const c of p) {
        const val = (o: Operand) => ('literal' in o ? o.literal : (vars[o.field] ?? ''));
        if ('value' in c) piped = val(c.value);
        else {
          const args = c.args.map(val);
          if (piped !== undefined) args.push(piped);
          piped = FUNCTIONS[c.fn]!.fn(...args);
        }
      }
      out += piped ?? '';
    }
    return out;
  }
}

function tokenize(action: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < action.length) {
    const c = action[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '|') {
      tokens.push('|');
      i++;
    } else if (c === '"') {
      let j = i + 1;
      let s = '';
      for (; j < action.length && action[j] !== '"'; j++) {
        if (action[j] === '\\' && j + 1 < action.length) {
          j++;
          s += action[j] === 'n' ? '\n' : action[j] === 't' ? '\t' : action[j];
        } else s += action[j];
      }
      if (j >= action.length) throw new TemplateError('unterminated string');
      tokens.push('"' + s);
      i = j + 1;
    } else {
      let j = i;
      while (j < action.length && !/[\s|"]/.test(action[j]!)) j++;
      tokens.push(action.slice(i, j));
      i = j;
    }
  }
  return tokens;
}

function operand(tok: string, fields: Set<TemplateField>): Operand {
  if (tok.startsWith('"')) return { literal: tok.slice(1) };
  if (tok.startsWith('.')) {
    const name = tok.slice(1);
    if (!(TEMPLATE_FIELDS as readonly string[]).includes(name))
      throw new TemplateError(`unknown field "${tok.slice(0, 40)}"`);
    fields.add(name as TemplateField);
    return { field: name as TemplateField };
  }
  throw new TemplateError(`unexpected "${tok.slice(0, 40)}"`);
}

function parsePipeline(action: string, fields: Set<TemplateField>): Command[] {
  if (action === '') throw new TemplateError('empty action "{{}}"');
  const tokens = tokenize(action);
  const stages: string[][] = [[]];
  for (const t of tokens) {
    if (t === '|') stages.push([]);
    else stages[stages.length - 1]!.push(t);
  }
  return stages.map((stage, i) => {
    if (stage.length === 0) throw new TemplateError('missing command in pipeline');
    const head = stage[0]!;
    if (head.startsWith('.') || head.startsWith('"')) {
      if (stage.length > 1)
        throw new TemplateError(`unexpected "${stage[1]!.slice(0, 40)}" after ${head.slice(0, 40)}`);
      if (i > 0) throw new TemplateError(`cannot pipe into "${head.slice(0, 40)}"`);
      return { value: operand(head, fields) };
    }
    const spec = FUNCTIONS[head];
    if (!spec)
      throw new TemplateError(
        `function "${head.slice(0, 40)}" not defined (known: ${Object.keys(FUNCTIONS).join(', ')})`,
      );
    const args = stage.slice(1).map((t) => operand(t, fields));
    const given = args.length + (i > 0 ? 1 : 0);
    if (given !== spec.arity)
      throw new TemplateError(`wrong number of arguments for ${head}: want ${spec.arity}, got ${given}`);
    return { fn: head, args };
  });
}
