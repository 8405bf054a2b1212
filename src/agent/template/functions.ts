/**
 * consul-template's functions that Vault Agent templates use, with consul-template's argument order
 * (made for pipelines: `{{ .csv | split "," }}`, `{{ .list | join "," }}`, `{{ .s | replaceAll "a" "b" }}`,
 * `{{ .tags | contains "x" }}`): base64Decode, base64Encode, toJSON, toJSONPretty, toYAML,
 * parseJSON, env, file, trimSpace, split, join, contains, replaceAll, toLower, toUpper. `secret`
 * is supplied by the template runner (it needs the server).
 */
import { readFileSync } from 'node:fs';
import { ArgTypeError, type TemplateFunc } from './exec.js';
import { compareGoStrings, goFloat, goJson, goType, GoStruct, isMap, isStringSlice, stringSlice } from './values.js';

function str(v: unknown, _fn: string): string {
  if (typeof v !== 'string') throw new ArgTypeError('string', v);
  return v;
}

function strings(v: unknown, _fn: string): string[] {
  if (!isStringSlice(v)) throw new ArgTypeError('[]string', v);
  return v;
}

function b64decode(s: string): string {
  const clean = s;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 !== 0) {
    const bad = [...clean].findIndex((c, i) => !/[A-Za-z0-9+/=]/.test(c) || (c === '=' && i < clean.length - 2));
    throw new Error(
      `base64Decode: illegal base64 data at input byte ${bad === -1 ? Math.floor(clean.length / 4) * 4 : bad}`,
    );
  }
  return Buffer.from(clean, 'base64').toString('utf8');
}

function yamlScalar(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (typeof v === 'number') return goFloat(v);
  const s = String(v);
  const plain =
    s !== '' &&
    !/^[\s\-?:,[\]{}#&*!|>'"%@`]/.test(s) &&
    !/[\s]$/.test(s) &&
    !/: |\s#|[\n\r\t]/.test(s) &&
    !/^(true|false|yes|no|on|off|y|n|null|~)$/i.test(s) &&
    !/^[-+]?(\.?[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)?|0x[0-9a-fA-F_]+|0o?[0-7_]+|\.inf|\.nan)$/i.test(s) &&
    !s.endsWith(':');
  if (plain) return s;
  if (/[\n\r\t\x00-\x1f]/.test(s)) return JSON.stringify(s);
  return `'${s.replace(/'/g, "''")}'`;
}

/** yaml.v2's block style: sorted map keys, lists at their key's indentation. */
function toYaml(v: unknown, indent = ''): string {
  if (isMap(v) || v instanceof GoStruct) {
    const o = v instanceof GoStruct ? v.fields : v;
    const keys = Object.keys(o).sort(compareGoStrings);
    if (keys.length === 0) return `${indent}{}\n`;
    return keys
      .map((k) => {
        const x = o[k];
        const key = `${indent}${yamlScalar(k)}:`;
        if ((isMap(x) && Object.keys(x).length) || x instanceof GoStruct) return `${key}\n${toYaml(x, `${indent}  `)}`;
        if (Array.isArray(x) && x.length) return `${key}\n${toYaml(x, indent)}`;
        return `${key} ${isMap(x) ? '{}' : Array.isArray(x) ? '[]' : yamlScalar(x)}\n`;
      })
      .join('');
  }
  if (Array.isArray(v)) {
    if (v.length === 0) return `${indent}[]\n`;
    return v
      .map((x) => {
        if ((isMap(x) && Object.keys(x).length) || (Array.isArray(x) && x.length)) {
          const inner = toYaml(x, `${indent}  `);
          return `${indent}- ${inner.slice(indent.length + 2)}`;
        }
        return `${indent}- ${isMap(x) ? '{}' : Array.isArray(x) ? '[]' : yamlScalar(x)}\n`;
      })
      .join('');
  }
  return `${yamlScalar(v)}\n`;
}

function contains(v: unknown, l: unknown): boolean {
  if (typeof l === 'string') return typeof v === 'string' && l.includes(v);
  if (Array.isArray(l))
    return l.some((x) => x === v || (typeof x === 'object' && JSON.stringify(x) === JSON.stringify(v)));
  if (isMap(l)) return typeof v === 'string' && Object.prototype.hasOwnProperty.call(l, v);
  throw new Error(`contains: cannot check membership in ${goType(l)}`);
}

/** The functions, given the environment `env` reads. */
export function consulTemplateFunctions(env: NodeJS.ProcessEnv = process.env): Record<string, TemplateFunc> {
  return {
    base64Decode: (s) => b64decode(str(s, 'base64Decode')),
    base64Encode: (s) => Buffer.from(str(s, 'base64Encode'), 'utf8').toString('base64'),
    toJSON: (v) => goJson(v),
    toJSONPretty: (v) => goJson(v, '  '),
    toYAML: (v) => toYaml(v).replace(/\n$/, ''),
    parseJSON: (s) => {
      const text = str(s, 'parseJSON');
      if (text === '') return {};
      try {
        return JSON.parse(text);
      } catch {
        // Not the parser's message: it quotes the text, which may be a secret.
        throw new Error('parseJSON: not valid JSON');
      }
    },
    env: (name) => env[str(name, 'env')] ?? '',
    file: (path) => {
      try {
        return readFileSync(str(path, 'file'), 'utf8');
      } catch (e) {
        throw new Error(`file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}: ${String(path)}`);
      }
    },
    trimSpace: (s) => str(s, 'trimSpace').replace(/^[\s\u0085\u00a0]+|[\s\u0085\u00a0]+$/gu, ''),
    split: (sep, s) => {
      const t = str(s, 'split').trim();
      return stringSlice(t === '' ? [] : t.split(str(sep, 'split')));
    },
    join: (sep, a) => strings(a, 'join').join(str(sep, 'join')),
    contains: (v, l) => contains(v, l),
    replaceAll: (f, t, s) => str(s, 'replaceAll').split(str(f, 'replaceAll')).join(str(t, 'replaceAll')),
    toLower: (s) => str(s, 'toLower').toLowerCase(),
    toUpper: (s) => str(s, 'toUpper').toUpperCase(),
  };
}
