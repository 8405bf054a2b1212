/**
 * A parser for HCL version 1, the syntax of Vault's server configuration and ACL policies, and for
 * JSON (which HCL1 also accepts: a document whose first non-blank character is `{`).
 *
 * The result is a syntax tree that keeps the line and column of every key and value, so callers can
 * say "config.hcl line 12: storage.postgresql: unknown key "tabel"". `hclToPlain` turns it into
 * plain objects for code that does not care about positions (each object still knows its keys'
 * lines through `linesOf`).
 *
 * Grammar (after hashicorp/hcl v1's scanner and parser, read to learn; written anew here):
 *   body    := item*
 *   item    := key label* ( '=' value | object )        (an optional ',' may follow an item)
 *   key     := identifier | string
 *   label   := identifier | string
 *   value   := string | heredoc | number | 'true' | 'false' | list | object
 *   list    := '[' ( value ( ',' value )* ','? )? ']'
 *   object  := '{' body '}'
 * Identifiers are `[A-Za-z_][A-Za-z0-9_.-]*`; comments are `#`, `//` (to end of line) and `/* *\/`;
 * strings are double-quoted with the escapes \n \t \r \" \\ \uXXXX \UXXXXXXXX and keep `${...}`
 * verbatim; heredocs are `<<EOF` ... `EOF` and `<<-EOF` (the closing line's indentation is removed
 * from every line); numbers are integers, decimals with optional exponent, 0x hexadecimal and
 * (as HCL1, which reads integers with Go's base prefixes) 0-prefixed octal, optionally negative.
 */

/** Where something is in the source (1-based). */
export interface HclPos {
  line: number;
  column: number;
}

/** A string (quoted or heredoc). */
export interface HclString extends HclPos {
  type: 'string';
  value: string;
}
/** A number (integer or decimal). */
export interface HclNumber extends HclPos {
  type: 'number';
  value: number;
  /** The number as written (`0x1F`, `1e3`). */
  raw: string;
}
/** `true` or `false`. */
export interface HclBool extends HclPos {
  type: 'bool';
  value: boolean;
}
/** JSON `null` (HCL1 has no null). */
export interface HclNull extends HclPos {
  type: 'null';
  value: null;
}
/** `[ ... ]`. */
export interface HclList extends HclPos {
  type: 'list';
  items: HclValue[];
}
/** `{ ... }`: a block body or an object value; keys may repeat (blocks do). */
export interface HclObject extends HclPos {
  type: 'object';
  items: HclItem[];
}
/** Any value. */
export type HclValue = HclString | HclNumber | HclBool | HclNull | HclList | HclObject;

/** One `key label* = value` or `key label* { ... }` entry, with the key's position. */
export interface HclItem extends HclPos {
  key: string;
  /** Block labels: `storage "postgresql" { }` has key `storage`, labels `["postgresql"]`. */
  labels: string[];
  value: HclValue;
  /** True for `key { ... }` (a block), false for `key = value`. */
  block: boolean;
}

/** A syntax error with its position; `message` reads `line 3, column 7: expected "=" ...`. */
export class HclSyntaxError extends Error {
  readonly line: number;
  readonly column: number;
  readonly reason: string;
  constructor(reason: string, pos: HclPos) {
    super(`line ${pos.line}, column ${pos.column}: ${reason}`);
    this.name = 'HclSyntaxError';
    this.line = pos.line;
    this.column = pos.column;
    this.reason = reason;
  }
}

type TokKind = 'string' | 'heredoc' | 'ident' | 'number' | 'punct' | 'eof';
interface Tok extends HclPos {
  kind: TokKind;
  text: string;
}

const IDENT_START = /[A-Za-z_]/;
const IDENT_PART = /[A-Za-z0-9_.\-]/;

/** Split source into tokens; strings and heredocs come out already unescaped. */
function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const pos = (at = i): HclPos => ({ line, column: at - lineStart + 1 });
  const newline = (at: number) => {
    line++;
    lineStart = at + 1;
  };
  while (i < src.length) {
    const c = src[i]!;
    if (c === '\n') {
      newline(i);
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v' || c === '\uFEFF') {
      i++;
    } else if (c === '#' || (c === '/' && src[i + 1] === '/')) {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (c === '/' && src[i + 1] === '*') {
      const start = pos();
      const end = src.indexOf('*/', i + 2);
      if (end === -1) throw new HclSyntaxError('comment not terminated', start);
      for (let j = i; j < end; j++) if (src[j] === '\n') newline(j);
      i = end + 2;
    } else if (c === '"') {
      const start = pos();
      const r = readString(src, i, start);
      out.push({ kind: 'string', text: r.value, ...start });
      i = r.end;
    } else if (c === '<' && src[i + 1] === '<') {
      const start = pos();
      const r = readHeredoc(src, i, start);
      out.push({ kind: 'heredoc', text: r.value, ...start });
      for (let j = i; j < r.end; j++) if (src[j] === '\n') newline(j);
      i = r.end;
    } else if (IDENT_START.test(c)) {
      const start = pos();
      let j = i + 1;
      while (j < src.length && IDENT_PART.test(src[j]!)) j++;
      out.push({ kind: 'ident', text: src.slice(i, j), ...start });
      i = j;
    } else if (
      /[0-9]/.test(c) ||
      ((c === '-' || c === '+') && /[0-9.]/.test(src[i + 1] ?? '')) ||
      (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))
    ) {
      const start = pos();
      let j = i + 1;
      while (j < src.length && /[0-9A-Za-z_.]/.test(src[j]!)) {
        // An exponent may carry a sign: 1e-3.
        if (
          (src[j] === 'e' || src[j] === 'E') &&
          (src[j + 1] === '-' || src[j + 1] === '+') &&
          !/^[-+]?0[xX]/.test(src.slice(i, j))
        )
          j += 2;
        else j++;
      }
      out.push({ kind: 'number', text: src.slice(i, j), ...start });
      i = j;
    } else if ('{}[]=,:'.includes(c)) {
      out.push({ kind: 'punct', text: c, ...pos() });
      i++;
    } else {
      throw new HclSyntaxError(`unexpected character ${JSON.stringify(c)}`, pos());
    }
  }
  out.push({ kind: 'eof', text: '', ...pos() });
  return out;
}

/** Read a double-quoted string starting at `src[i] === '"'`; `${...}` is kept as written. */
function readString(src: string, i: number, start: HclPos): { value: string; end: number } {
  let j = i + 1;
  let s = '';
  let braces = 0; // inside ${ ... }, quotes do not end the string (HCL1 interpolation)
  for (;;) {
    if (j >= src.length || src[j] === '\n') throw new HclSyntaxError('string not terminated', start);
    const ch = src[j]!;
    if (ch === '"' && braces === 0) return { value: s, end: j + 1 };
    if (ch === '$' && src[j + 1] === '{') {
      braces++;
      s += '${';
      j += 2;
      continue;
    }
    if (braces > 0 && ch === '}') braces--;
    if (braces > 0 && ch === '{') braces++;
    if (ch !== '\\') {
      s += ch;
      j++;
      continue;
    }
    const e = src[j + 1];
    const esc: Record<string, string> = {
      n: '\n',
      t: '\t',
      r: '\r',
      '"': '"',
      '\\': '\\',
      a: '\x07',
      b: '\b',
      f: '\f',
      v: '\v',
      '/': '/',
    };
    if (e !== undefined && esc[e] !== undefined) {
      s += esc[e];
      j += 2;
    } else if (e === 'u' || e === 'U') {
      const n = e === 'u' ? 4 : 8;
      const hex = src.slice(j + 2, j + 2 + n);
      if (!new RegExp(`^[0-9A-Fa-f]{${n}}$`).test(hex)) throw new HclSyntaxError(`invalid escape \\${e}${hex}`, start);
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff) throw new HclSyntaxError(`invalid escape \\${e}${hex}`, start);
      s += String.fromCodePoint(cp);
      j += 2 + n;
    } else {
      throw new HclSyntaxError(`invalid escape "\\${e ?? ''}"`, start);
    }
  }
}

/** Read `<<EOF\n...\nEOF` or `<<-EOF` (indented); the value ends with the last newline before the marker. */
function readHeredoc(src: string, i: number, start: HclPos): { value: string; end: number } {
  let j = i + 2;
  const indented = src[j] === '-';
  if (indented) j++;
  const m = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(src.slice(j));
  if (!m) throw new HclSyntaxError('heredoc needs a marker, as in <<EOF', start);
  const marker = m[0];
  j += marker.length;
  if (src[j] === '\r') j++;
  if (src[j] !== '\n') throw new HclSyntaxError('heredoc marker must end its line', start);
  j++;
  const lines: string[] = [];
  for (;;) {
    if (j >= src.length) throw new HclSyntaxError(`heredoc not terminated: missing closing "${marker}"`, start);
    let nl = src.indexOf('\n', j);
    if (nl === -1) nl = src.length;
    const raw = src.slice(j, nl).replace(/\r$/, '');
    if ((indented ? raw.trim() : raw) === marker) {
      let body = lines;
      if (indented) {
        // HCL1: strip the closing marker's indentation from every line when all lines carry it.
        const indent = /^[ \t]*/.exec(raw)![0];
        if (lines.every((l) => l.startsWith(indent) || l.trim() === ''))
          body = lines.map((l) => l.slice(Math.min(indent.length, l.length)));
      }
      return { value: body.length ? body.join('\n') + '\n' : '', end: nl };
    }
    lines.push(raw);
    j = nl + 1;
  }
}

class Parser {
  private i = 0;
  constructor(private readonly toks: Tok[]) {}
  private peek(): Tok {
    return this.toks[this.i]!;
  }
  private take(): Tok {
    const t = this.toks[this.i]!;
    if (t.kind !== 'eof') this.i++;
    return t;
  }
  private isPunct(t: Tok, p: string): boolean {
    return t.kind === 'punct' && t.text === p;
  }
  private describe(t: Tok): string {
    return t.kind === 'eof' ? 'end of file' : t.kind === 'string' ? `string ${JSON.stringify(t.text)}` : `"${t.text}"`;
  }

  /** HCL body up to `}` (nested) or end of file (top level). */
  body(open: Tok | null): HclObject {
    const at = open ?? { line: 1, column: 1 };
    const items: HclItem[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind === 'eof') {
        if (open) throw new HclSyntaxError(`object opened at line ${open.line} is not closed: expected "}"`, t);
        break;
      }
      if (open && this.isPunct(t, '}')) {
        this.take();
        break;
      }
      items.push(this.item());
      if (this.isPunct(this.peek(), ',')) this.take();
    }
    return { type: 'object', items, line: at.line, column: at.column };
  }

  private item(): HclItem {
    const k = this.take();
    if (k.kind !== 'ident' && k.kind !== 'string')
      throw new HclSyntaxError(`expected a key, got ${this.describe(k)}`, k);
    const labels: string[] = [];
    while (this.peek().kind === 'string' || this.peek().kind === 'ident') labels.push(this.take().text);
    const op = this.take();
    if (this.isPunct(op, '=')) {
      if (labels.length)
        throw new HclSyntaxError(
          `key "${k.text}": labels are only allowed on blocks ("${k.text} \\"label\\" { ... }")`,
          k,
        );
      return { key: k.text, labels, value: this.value(), block: false, line: k.line, column: k.column };
    }
    if (this.isPunct(op, '{'))
      return { key: k.text, labels, value: this.body(op), block: true, line: k.line, column: k.column };
    throw new HclSyntaxError(`key "${k.text}": expected "=" or "{", got ${this.describe(op)}`, op);
  }

  value(): HclValue {
    const t = this.take();
    const pos = { line: t.line, column: t.column };
    switch (t.kind) {
      case 'string':
      case 'heredoc':
        return { type: 'string', value: t.text, ...pos };
      case 'number':
        return { type: 'number', value: parseNumber(t), raw: t.text, ...pos };
      case 'ident':
        if (t.text === 'true' || t.text === 'false') return { type: 'bool', value: t.text === 'true', ...pos };
        throw new HclSyntaxError(`unexpected ${this.describe(t)}: strings need double quotes`, t);
      case 'punct':
        if (t.text === '[') return this.list(t);
        if (t.text === '{') return this.body(t);
        break;
      default:
        break;
    }
    throw new HclSyntaxError(`expected a value, got ${this.describe(t)}`, t);
  }

  private list(open: Tok): HclList {
    const items: HclValue[] = [];
    for (;;) {
      const t = this.peek();
      if (this.isPunct(t, ']')) {
        this.take();
        break;
      }
      if (t.kind === 'eof') throw new HclSyntaxError(`list opened at line ${open.line} is not closed: expected "]"`, t);
      items.push(this.value());
      const sep = this.peek();
      if (this.isPunct(sep, ',')) this.take();
      else if (!this.isPunct(sep, ']'))
        throw new HclSyntaxError(`expected "," or "]" in list, got ${this.describe(sep)}`, sep);
    }
    return { type: 'list', items, line: open.line, column: open.column };
  }

  /** JSON value (used when the document starts with `{`). */
  json(): HclValue {
    const t = this.take();
    const pos = { line: t.line, column: t.column };
    if (t.kind === 'string') return { type: 'string', value: t.text, ...pos };
    if (t.kind === 'number') {
      if (!/^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$/.test(t.text))
        throw new HclSyntaxError(`invalid JSON number "${t.text}"`, t);
      return { type: 'number', value: Number(t.text), raw: t.text, ...pos };
    }
    if (t.kind === 'ident' && (t.text === 'true' || t.text === 'false'))
      return { type: 'bool', value: t.text === 'true', ...pos };
    if (t.kind === 'ident' && t.text === 'null') return { type: 'null', value: null, ...pos };
    if (this.isPunct(t, '[')) {
      const items: HclValue[] = [];
      if (this.isPunct(this.peek(), ']')) this.take();
      else
        for (;;) {
          items.push(this.json());
          const sep = this.take();
          if (this.isPunct(sep, ']')) break;
          if (!this.isPunct(sep, ',')) throw new HclSyntaxError(`expected "," or "]", got ${this.describe(sep)}`, sep);
        }
      return { type: 'list', items, ...pos };
    }
    if (this.isPunct(t, '{')) {
      const items: HclItem[] = [];
      if (this.isPunct(this.peek(), '}')) this.take();
      else
        for (;;) {
          const k = this.take();
          if (k.kind !== 'string') throw new HclSyntaxError(`expected a quoted key, got ${this.describe(k)}`, k);
          const colon = this.take();
          if (!this.isPunct(colon, ':'))
            throw new HclSyntaxError(`expected ":" after key "${k.text}", got ${this.describe(colon)}`, colon);
          items.push({ key: k.text, labels: [], value: this.json(), block: false, line: k.line, column: k.column });
          const sep = this.take();
          if (this.isPunct(sep, '}')) break;
          if (!this.isPunct(sep, ',')) throw new HclSyntaxError(`expected "," or "}", got ${this.describe(sep)}`, sep);
        }
      return { type: 'object', items, ...pos };
    }
    throw new HclSyntaxError(`expected a JSON value, got ${this.describe(t)}`, t);
  }

  end(): void {
    const t = this.peek();
    if (t.kind !== 'eof') throw new HclSyntaxError(`unexpected ${this.describe(t)} after the document`, t);
  }
}

function parseNumber(t: Tok): number {
  const s = t.text;
  let n: number;
  if (/^[-+]?0[xX][0-9A-Fa-f]+$/.test(s)) n = (s.startsWith('-') ? -1 : 1) * parseInt(s.replace(/^[-+]?0[xX]/, ''), 16);
  // HCL1 reads integers with Go's base prefixes: a leading 0 means octal (`mode = 0640` is 416).
  else if (/^[-+]?0[0-7]+$/.test(s)) n = (s.startsWith('-') ? -1 : 1) * parseInt(s.replace(/^[-+]?0/, ''), 8);
  else if (/^[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$/.test(s)) n = Number(s);
  else throw new HclSyntaxError(`invalid number "${s}"`, t);
  if (!Number.isFinite(n)) throw new HclSyntaxError(`number "${s}" is out of range`, t);
  return n;
}

/** True when the text is a JSON document (first non-blank character `{`), as HCL1 decides. */
export function looksLikeJson(text: string): boolean {
  return /^[\s\uFEFF]*\{/.test(text);
}

/** Parse HCL1 (or JSON, when the text starts with `{`) into a tree with positions; throws HclSyntaxError. */
export function parseHcl(text: string): HclObject {
  const p = new Parser(tokenize(text));
  if (looksLikeJson(text)) {
    const doc = p.json();
    p.end();
    if (doc.type !== 'object') throw new HclSyntaxError('a JSON document must be an object', doc);
    return doc;
  }
  const body = p.body(null);
  p.end();
  return body;
}

/** A plain-JS rendering of HCL values (`hclToPlain`). */
export type PlainValue = string | number | boolean | null | PlainValue[] | PlainObject;
/** A plain object; `linesOf(obj)` gives each key's line. */
export interface PlainObject {
  [key: string]: PlainValue;
}

const LINES = new WeakMap<object, Record<string, number>>();

/** Lines of the keys of an object made by `hclToPlain` (empty for other objects). */
export function linesOf(obj: object): Readonly<Record<string, number>> {
  return LINES.get(obj) ?? {};
}

/**
 * Plain objects from a tree: labels nest (`path "a/*" { ... }` becomes `{ path: { "a/*": {...} } }`),
 * and a key that occurs more than once becomes a list of its values, in source order.
 */
export function hclToPlain(v: HclValue): PlainValue {
  switch (v.type) {
    case 'list':
      return v.items.map(hclToPlain);
    case 'object': {
      const o: PlainObject = {};
      const lines: Record<string, number> = {};
      const repeated = new Set<string>(); // keys whose value became a list by repetition
      LINES.set(o, lines);
      for (const it of v.items) {
        let value = hclToPlain(it.value);
        for (let i = it.labels.length - 1; i >= 0; i--) {
          const wrap: PlainObject = { [it.labels[i]!]: value };
          LINES.set(wrap, { [it.labels[i]!]: it.line });
          value = wrap;
        }
        if (!Object.prototype.hasOwnProperty.call(o, it.key)) {
          o[it.key] = value;
          lines[it.key] = it.line;
          continue;
        }
        const prev = o[it.key]!;
        const label = it.labels[0];
        if (label !== undefined && !repeated.has(it.key) && isPlainObject(prev) && !(label in prev)) {
          // `path "a" {}` then `path "b" {}`: one object keyed by label, as HCL1 decodes it.
          prev[label] = (value as PlainObject)[label]!;
          LINES.set(prev, { ...linesOf(prev), [label]: it.line });
        } else if (repeated.has(it.key)) {
          (prev as PlainValue[]).push(value);
        } else {
          o[it.key] = [prev, value];
          repeated.add(it.key);
        }
      }
      return o;
    }
    default:
      return v.value;
  }
}

function isPlainObject(v: PlainValue): v is PlainObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
