/**
 * The builtin functions of Go's text/template (and, or, not, len, index, slice, print, printf,
 * println, html, js, urlquery, eq, ne, lt, le, gt, ge, call) with Go's argument checks and messages.
 */
import { sprint, sprintf, sprintln } from './printf.js';
import { compareGoStrings, goType, isMap, truth } from './values.js';
import { ValueError, type TemplateFunc } from './func-types.js';

export class ArityError extends Error {}

/** An argument of the wrong type for a function's parameter (`wrong type for value; expected string; got float64`). */
export class ArgTypeError extends Error {
  constructor(
    readonly expected: string,
    readonly value: unknown,
  ) {
    super(`wrong type for value; expected ${expected}; got ${goType(value)}`);
  }
}

function arity(args: unknown[], want: number, atLeast = false): void {
  if (atLeast ? args.length < want : args.length !== want)
    throw new ArityError(`want ${atLeast ? 'at least ' : ''}${want} got ${args.length}`);
}

function basicKind(v: unknown): string {
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'float';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (v === null || v === undefined) return 'invalid';
  return 'complex-type';
}

function eq(a: unknown, ...rest: unknown[]): boolean {
  if (rest.length === 0) throw new Error('missing argument for comparison');
  const ka = basicKind(a);
  for (const b of rest) {
    const kb = basicKind(b);
    if (ka === 'complex-type' || kb === 'complex-type') {
      if (ka === 'complex-type' && kb === 'complex-type')
        throw new ValueError(
          `non-comparable type ${sprintf('%s', [a])}: ${goType(a)}`,
          `non-comparable type ${goType(a)}`,
        );
      throw new Error('incompatible types for comparison');
    }
    if (ka === 'invalid' || kb === 'invalid') {
      if (ka === kb) return true;
      continue;
    }
    if (ka !== kb) throw new Error('incompatible types for comparison');
    if (a === b) return true;
  }
  return false;
}

function lt(a: unknown, b: unknown): boolean {
  const ka = basicKind(a);
  const kb = basicKind(b);
  if (
    ka === 'bool' ||
    ka === 'complex-type' ||
    ka === 'invalid' ||
    kb === 'bool' ||
    kb === 'complex-type' ||
    kb === 'invalid'
  )
    throw new Error('invalid type for comparison');
  if (ka !== kb) throw new Error('incompatible types for comparison');
  if (ka === 'string') return compareGoStrings(a as string, b as string) < 0;
  return (a as number) < (b as number);
}

function toIndex(k: unknown, len: number, what: string): number {
  if (typeof k !== 'bigint') throw new Error(`cannot index slice/array with type ${goType(k)}`);
  if (k < 0n || k >= BigInt(len)) throw new Error(`${what} out of range: ${k}`);
  return Number(k);
}

function index(item: unknown, ...keys: unknown[]): unknown {
  let v = item;
  for (const k of keys) {
    if (v === null || v === undefined) throw new Error('index of untyped nil');
    if (Array.isArray(v)) v = v[toIndex(k, v.length, 'index')];
    else if (typeof v === 'string') v = BigInt(Buffer.from(v)[toIndex(k, Buffer.byteLength(v), 'index')]!);
    else if (isMap(v)) {
      if (typeof k !== 'string') throw new Error(`value has type ${goType(k)}; should be string`);
      v = Object.prototype.hasOwnProperty.call(v, k) ? v[k] : null;
    } else throw new Error(`can't index item of type ${goType(v)}`);
  }
  return v;
}

function slice(item: unknown, ...idx: unknown[]): unknown {
  if (idx.length > 3) throw new Error(`too many slice indexes: ${idx.length}`);
  const len = typeof item === 'string' ? Buffer.byteLength(item) : Array.isArray(item) ? item.length : -1;
  if (len < 0) throw new Error(`can't slice item of type ${goType(item)}`);
  const n = idx.map((k) => {
    if (typeof k !== 'bigint') throw new Error(`cannot index slice/array with type ${goType(k)}`);
    if (k < 0n || k > BigInt(len)) throw new Error(`index out of range: ${k}`);
    return Number(k);
  });
  const [i = 0, j = len] = n;
  if (i > j) throw new Error(`invalid slice index: ${i} > ${j}`);
  if (typeof item === 'string') {
    if (idx.length === 3) throw new Error('cannot 3-index slice a string');
    return Buffer.from(item).subarray(i, j).toString('utf8');
  }
  return (item as unknown[]).slice(i, j);
}

function htmlEscape(s: string): string {
  return s.replace(
    /[<>&'"\0]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&#39;', '"': '&#34;', '\0': '\uFFFD' })[c]!,
  );
}

function jsEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === "'") out += "\\'";
    else if (ch === '"') out += '\\"';
    else if (ch === '<') out += '\\u003C';
    else if (ch === '>') out += '\\u003E';
    else if (ch === '&') out += '\\u0026';
    else if (ch === '=') out += '\\u003D';
    else if (cp < 0x20) out += `\\u${cp.toString(16).toUpperCase().padStart(4, '0')}`;
    else out += ch;
  }
  return out;
}

function evalArgs(args: unknown[]): string {
  if (args.length === 1 && typeof args[0] === 'string') return args[0];
  return sprint(args);
}

export function builtin(name: string): TemplateFunc | undefined {
  switch (name) {
    case 'not':
      return (...a) => (arity(a, 1), !truth(a[0]));
    case 'len':
      return (...a) => {
        arity(a, 1);
        const v = a[0];
        if (v === null || v === undefined) throw new Error('len of nil pointer');
        if (typeof v === 'string') return BigInt(Buffer.byteLength(v));
        if (Array.isArray(v)) return BigInt(v.length);
        if (isMap(v)) return BigInt(Object.keys(v).length);
        throw new Error(`len of type ${goType(v)}`);
      };
    case 'index':
      return (...a) => (arity(a, 1, true), index(a[0], ...a.slice(1)));
    case 'slice':
      return (...a) => (arity(a, 1, true), slice(a[0], ...a.slice(1)));
    case 'print':
      return (...a) => sprint(a);
    case 'println':
      return (...a) => sprintln(a);
    case 'printf':
      return (...a) => {
        arity(a, 1, true);
        if (typeof a[0] !== 'string') throw new ArgTypeError('string', a[0]);
        return sprintf(a[0], a.slice(1));
      };
    case 'html':
      return (...a) => htmlEscape(evalArgs(a));
    case 'js':
      return (...a) => jsEscape(evalArgs(a));
    case 'urlquery':
      return (...a) =>
        encodeURIComponent(evalArgs(a))
          .replace(/%20/g, '+')
          .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    case 'eq':
      return (...a) => (arity(a, 1, true), eq(a[0], ...a.slice(1)));
    case 'ne':
      return (...a) => (arity(a, 2), !eq(a[0], a[1]));
    case 'lt':
      return (...a) => (arity(a, 2), lt(a[0], a[1]));
    case 'le':
      return (...a) => (arity(a, 2), lt(a[0], a[1]) || eq(a[0], a[1]));
    case 'gt':
      return (...a) => (arity(a, 2), !lt(a[0], a[1]) && !eq(a[0], a[1]));
    case 'ge':
      return (...a) => (arity(a, 2), !lt(a[0], a[1]));
    case 'call':
      return () => {
        throw new Error('call: keyhold templates have no function values');
      };
  }
  return undefined;
}
