/**
 * Go's fmt.Sprintf, fmt.Sprint and fmt.Sprintln for template values (the `printf`, `print` and
 * `println` functions): verbs %v %+v %s %q %d %x %X %o %b %c %f %F %e %E %g %t %T %%, flags
 * `-` `+` `0` ` ` `#`, width and precision (also `*`), and Go's in-band errors
 * (`%!d(string=x)`, `%!s(MISSING)`, `%!(EXTRA int=1)`).
 */
import { compareGoStrings, formatValue, goFixed, goFloat, goQuote, goType, GoStruct } from './values.js';

interface Spec {
  minus: boolean;
  plus: boolean;
  zero: boolean;
  space: boolean;
  sharp: boolean;
  width?: number;
  prec?: number;
}

function pad(s: string, sp: Spec, numeric = false): string {
  if (sp.width === undefined || s.length >= sp.width) return s;
  const n = sp.width - [...s].length;
  if (n <= 0) return s;
  if (sp.minus) return s + ' '.repeat(n);
  if (sp.zero && numeric) {
    const sign = /^[-+ ]/.test(s) ? s[0] : '';
    return sign + '0'.repeat(n) + s.slice(sign.length);
  }
  return ' '.repeat(n) + s;
}

function bad(verb: string, v: unknown): string {
  if (v === undefined || v === null) return `%!${verb}(<nil>)`;
  return `%!${verb}(${goType(v)}=${formatValue(v)})`;
}

function fixed(f: number, prec: number): string {
  return goFixed(f, Math.min(prec, 100));
}

function expo(f: number, prec: number | undefined, upper: boolean): string {
  if (!Number.isFinite(f)) return goFloat(f);
  const s = prec === undefined ? f.toExponential() : f.toExponential(prec);
  const [m, e] = s.split('e') as [string, string];
  const n = Number(e);
  const out = `${m}e${n < 0 ? '-' : '+'}${String(Math.abs(n)).padStart(2, '0')}`;
  return upper ? out.toUpperCase() : out;
}

function integer(v: bigint, verb: string, sp: Spec): string {
  const neg = v < 0n;
  const a = neg ? -v : v;
  let body: string;
  switch (verb) {
    case 'x':
      body = (sp.sharp ? '0x' : '') + a.toString(16);
      break;
    case 'X':
      body = (sp.sharp ? '0X' : '') + a.toString(16).toUpperCase();
      break;
    case 'o':
      body = (sp.sharp ? '0' : '') + a.toString(8);
      break;
    case 'b':
      body = a.toString(2);
      break;
    default:
      body = a.toString(10);
  }
  if (sp.prec !== undefined) body = body.padStart(sp.prec, '0');
  return (neg ? '-' : sp.plus ? '+' : sp.space ? ' ' : '') + body;
}

function one(verb: string, v: unknown, sp: Spec): string {
  switch (verb) {
    case 'v':
      if (typeof v === 'string') return pad(v, sp);
      if (typeof v === 'number' && sp.plus) return pad((v >= 0 ? '+' : '') + goFloat(v), sp, true);
      if (typeof v === 'bigint') return pad(integer(v, 'd', sp), sp, true);
      if (typeof v === 'number') return pad(goFloat(v), sp, true);
      return pad(formatValue(v), sp);
    case 'T':
      return pad(v === undefined || v === null ? '<nil>' : goType(v), sp);
    case 's':
      if (typeof v === 'string') return pad(sp.prec !== undefined ? [...v].slice(0, sp.prec).join('') : v, sp);
      if (Array.isArray(v) || (typeof v === 'object' && v !== null && !(v instanceof GoStruct)))
        return pad(composite(v, sp), sp);
      return bad(verb, v);
    case 'q':
      if (typeof v === 'string') return pad(sp.sharp && !v.includes('`') ? `\`${v}\`` : goQuote(v), sp);
      if (typeof v === 'bigint') return pad(`'${String.fromCodePoint(Number(v))}'`, sp);
      return bad(verb, v);
    case 'd':
    case 'o':
    case 'b':
      if (typeof v === 'bigint') return pad(integer(v, verb, sp), sp, true);
      return bad(verb, v);
    case 'x':
    case 'X':
      if (typeof v === 'bigint') return pad(integer(v, verb, sp), sp, true);
      if (typeof v === 'string') {
        const h = Buffer.from(v).toString('hex');
        return pad((sp.sharp ? (verb === 'x' ? '0x' : '0X') : '') + (verb === 'X' ? h.toUpperCase() : h), sp);
      }
      return bad(verb, v);
    case 'c':
      if (typeof v === 'bigint') return pad(String.fromCodePoint(Number(v)), sp);
      return bad(verb, v);
    case 't':
      if (typeof v === 'boolean') return pad(String(v), sp);
      return bad(verb, v);
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G': {
      if (typeof v !== 'number') return bad(verb, v);
      let s: string;
      if (verb === 'f' || verb === 'F') s = fixed(v, sp.prec ?? 6);
      else if (verb === 'e' || verb === 'E') s = expo(v, sp.prec ?? 6, verb === 'E');
      else s = sp.prec === undefined ? goFloat(v) : gPrec(v, sp.prec);
      if (sp.plus && v >= 0) s = `+${s}`;
      else if (sp.space && v >= 0) s = ` ${s}`;
      return pad(s, sp, true);
    }
  }
  return `%!${verb}(${goType(v)}=${formatValue(v)})`;
}

/** %s of a slice or map: the verb applies to each element (Go prints `map[a:%!s(float64=1)]`). */
function composite(v: unknown, sp: Spec): string {
  const inner = { ...sp, width: undefined };
  if (Array.isArray(v)) return `[${v.map((x) => one('s', x, inner)).join(' ')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort(compareGoStrings);
  return `map[${keys.map((k) => `${k}:${one('s', o[k], inner)}`).join(' ')}]`;
}

function gPrec(f: number, prec: number): string {
  const p = prec === 0 ? 1 : prec;
  const [m, e] = f.toExponential(p - 1).split('e') as [string, string];
  const exp = Number(e);
  if (exp < -4 || exp >= p) {
    const mm = m.includes('.') ? m.replace(/0+$/, '').replace(/\.$/, '') : m;
    return `${mm}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  const s = f.toFixed(Math.max(0, p - 1 - exp));
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

/** fmt.Sprintf. */
export function sprintf(format: string, args: unknown[]): string {
  let out = '';
  let argi = 0;
  let i = 0;
  while (i < format.length) {
    const c = format[i]!;
    if (c !== '%') {
      out += c;
      i++;
      continue;
    }
    i++;
    const sp: Spec = { minus: false, plus: false, zero: false, space: false, sharp: false };
    for (; i < format.length; i++) {
      const f = format[i];
      if (f === '-') sp.minus = true;
      else if (f === '+') sp.plus = true;
      else if (f === '0') sp.zero = !sp.minus;
      else if (f === ' ') sp.space = true;
      else if (f === '#') sp.sharp = true;
      else break;
    }
    const num = (): number | undefined => {
      if (format[i] === '*') {
        i++;
        const a = args[argi++];
        return typeof a === 'bigint' ? Number(a) : undefined;
      }
      const m = /^\d+/.exec(format.slice(i));
      if (!m) return undefined;
      i += m[0].length;
      return Number(m[0]);
    };
    sp.width = num();
    if (format[i] === '.') {
      i++;
      sp.prec = num() ?? 0;
    }
    const verb = format[i];
    if (verb === undefined) {
      out += '%!(NOVERB)';
      break;
    }
    i++;
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (argi >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    out += one(verb, args[argi++], sp);
  }
  if (argi < args.length)
    out += `%!(EXTRA ${args
      .slice(argi)
      .map((a) => `${a === undefined || a === null ? '<nil>' : goType(a)}=${formatValue(a)}`)
      .join(', ')})`;
  return out;
}

/** fmt.Sprint: operands separated by a space when neither side is a string. */
export function sprint(args: unknown[]): string {
  let out = '';
  args.forEach((a, k) => {
    if (k > 0 && typeof a !== 'string' && typeof args[k - 1] !== 'string') out += ' ';
    out += formatValue(a);
  });
  return out;
}

/** fmt.Sprintln: operands always separated by a space, then a newline. */
export function sprintln(args: unknown[]): string {
  return `${args.map(formatValue).join(' ')}\n`;
}
