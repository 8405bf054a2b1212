/**
 * The syntax of policy text: HCL1 (blocks, labels, heredocs, comments) and JSON, read into a tree of
 * nodes that remember their line. What the keys mean is policies.ts's job; errors here already carry
 * Vault's "failed to parse policy" prefix.
 */
import { invalid } from '../framework/errors.js';

type Tok = { t: 'str' | 'ident' | 'num' | 'punct'; v: string; line: number };

/** Vault answers every policy parse failure with this prefix (vault/policy.go). */
export function policyParseError(msg: string) {
  return invalid(`failed to parse policy: ${msg}`);
}

const bad = policyParseError;

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  let line = 1;
  while (i < src.length) {
    const c = src[i]!;
    if (c === '\n') {
      line++;
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v' || c === '\ufeff') i++;
    else if (c === '#' || (c === '/' && src[i + 1] === '/')) {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      if (end === -1) throw bad(`unterminated comment at line ${line}`);
      line += src.slice(i, end).split('\n').length - 1;
      i = end + 2;
    } else if (c === '<' && src[i + 1] === '<') {
      // Heredoc (HCL1): <<EOT ... EOT, or <<-EOT with an indented terminator.
      const m = /^<<(-?)([A-Za-z_][\w-]*)[ \t]*\r?\n/.exec(src.slice(i));
      if (!m) throw bad(`invalid heredoc at line ${line}`);
      const startLine = line;
      const body: string[] = [];
      let j = i + m[0].length;
      line++;
      for (;;) {
        if (j >= src.length) throw bad(`unterminated heredoc starting at line ${startLine}`);
        const nl = src.indexOf('\n', j);
        const raw = src.slice(j, nl === -1 ? src.length : nl).replace(/\r$/, '');
        j = nl === -1 ? src.length : nl + 1;
        if ((m[1] ? raw.trim() : raw) === m[2]) break;
        body.push(raw);
        line++;
      }
      out.push({ t: 'str', v: body.join('\n') + (body.length ? '\n' : ''), line: startLine });
      line++;
      i = j;
    } else if (c === '"') {
      const startLine = line;
      let j = i + 1;
      let s = '';
      while (j < src.length && src[j] !== '"') {
        const ch = src[j]!;
        if (ch === '\n') throw bad(`unterminated string at line ${startLine}`);
        if (ch === '\\') {
          const n = src[j + 1];
          if (n === 'u') {
            const hex = src.slice(j + 2, j + 6);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw bad(`invalid escape at line ${line}`);
            s += String.fromCharCode(parseInt(hex, 16));
            j += 6;
            continue;
          }
          s += n === 'n' ? '\n' : n === 't' ? '\t' : n === 'r' ? '\r' : n === 'b' ? '\b' : n === 'f' ? '\f' : (n ?? '');
          j += 2;
        } else {
          s += ch;
          j++;
        }
      }
      if (j >= src.length) throw bad(`unterminated string at line ${startLine}`);
      out.push({ t: 'str', v: s, line });
      i = j + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i;
      while (j < src.length && /[\w.-]/.test(src[j]!)) j++;
      out.push({ t: 'ident', v: src.slice(i, j), line });
      i = j;
    } else if (/[0-9-]/.test(c)) {
      let j = i + 1;
      while (j < src.length && /[\w.+-]/.test(src[j]!)) j++;
      out.push({ t: 'num', v: src.slice(i, j), line });
      i = j;
    } else if ('{}[]=,:'.includes(c)) {
      out.push({ t: 'punct', v: c, line });
      i++;
    } else throw bad(`illegal char "${c}" at line ${line}`);
  }
  return out;
}

/** A parsed HCL/JSON value with the line it starts on. */
export type Node =
  | { kind: 'scalar'; value: string | number | boolean | null; line: number }
  | { kind: 'list'; items: Node[]; line: number }
  | { kind: 'object'; items: Item[]; line: number };
/** One `key "label"... = value` or `key "label" { ... }` entry; blocks with labels nest as objects. */
export interface Item {
  key: string;
  line: number;
  value: Node;
}

class Parser {
  private i = 0;
  constructor(private readonly toks: Tok[]) {}
  private peek(): Tok | undefined {
    return this.toks[this.i];
  }
  private next(what: string): Tok {
    const t = this.toks[this.i++];
    if (!t) throw bad(`unexpected end of input, expected ${what}`);
    return t;
  }
  /** The whole document: a body, or (JSON) one object. */
  document(): Node {
    const first = this.peek();
    if (first?.t === 'punct' && first.v === '{') {
      this.i++;
      const o = { kind: 'object' as const, items: this.body('}'), line: first.line };
      const rest = this.peek();
      if (rest) throw bad(`unexpected "${rest.v}" at line ${rest.line}`);
      return o;
    }
    return { kind: 'object', items: this.body(null), line: 1 };
  }
  /** body := (key label* ( ('='|':') value | '{' body '}' ) ','?)* */
  private body(end: string | null): Item[] {
    const items: Item[] = [];
    for (;;) {
      const t = this.peek();
      if (!t) {
        if (end) throw bad(`missing "${end}"`);
        return items;
      }
      if (end && t.t === 'punct' && t.v === end) {
        this.i++;
        return items;
      }
      const key = this.next('a key');
      if (key.t !== 'ident' && key.t !== 'str') throw bad(`expected a key at line ${key.line}, got "${key.v}"`);
      const labels: Tok[] = [];
      while (this.peek()?.t === 'str') labels.push(this.next('label'));
      const op = this.next('"=" or "{"');
      let value: Node;
      if (op.t === 'punct' && (op.v === '=' || op.v === ':') && labels.length === 0) value = this.value();
      else if (op.t === 'punct' && op.v === '{') value = { kind: 'object', items: this.body('}'), line: op.line };
      else throw bad(`expected "=" or "{" at line ${op.line}, got "${op.v}"`);
      // `path "a" "b" { }` nests as { path: { a: { b: {...} } } } (HCL1 object keys).
      for (let k = labels.length - 1; k >= 0; k--)
        value = { kind: 'object', items: [{ key: labels[k]!.v, line: labels[k]!.line, value }], line: labels[k]!.line };
      items.push({ key: key.v, line: key.line, value });
      if (this.peek()?.t === 'punct' && this.peek()?.v === ',') this.i++;
    }
  }
  private value(): Node {
    const t = this.next('a value');
    if (t.t === 'str') return { kind: 'scalar', value: t.v, line: t.line };
    if (t.t === 'num') {
      const n = Number(t.v);
      if (!Number.isFinite(n)) throw bad(`invalid number "${t.v}" at line ${t.line}`);
      return { kind: 'scalar', value: n, line: t.line };
    }
    if (t.t === 'ident') {
      if (t.v === 'true' || t.v === 'false') return { kind: 'scalar', value: t.v === 'true', line: t.line };
      if (t.v === 'null') return { kind: 'scalar', value: null, line: t.line };
      throw bad(`unexpected "${t.v}" at line ${t.line}`);
    }
    if (t.v === '[') {
      const items: Node[] = [];
      for (;;) {
        const p = this.peek();
        if (!p) throw bad(`missing "]" for the list at line ${t.line}`);
        if (p.t === 'punct' && p.v === ']') break;
        items.push(this.value());
        const sep = this.peek();
        if (sep?.t === 'punct' && sep.v === ',') this.i++;
        else if (!(sep?.t === 'punct' && sep.v === ']'))
          throw bad(`expected "," or "]" at line ${sep?.line ?? t.line}`);
      }
      this.i++;
      return { kind: 'list', items, line: t.line };
    }
    if (t.v === '{') return { kind: 'object', items: this.body('}'), line: t.line };
    throw bad(`unexpected "${t.v}" at line ${t.line}`);
  }
}

/** Parse policy text (HCL or JSON) into its document node: an object of the top-level items. */
export function parseDocument(text: string): Node {
  return new Parser(tokenize(text)).document();
}
