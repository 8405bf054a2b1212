/**
 * Flags derived from a route's declared fields (src/framework/fields.ts): the flag name, whether it
 * takes a value, its help and the API field it sets come from the route, so a command never re-declares
 * them or maps them back by hand. `bodyOf` turns the parsed flags back into the request body.
 */
import type { AnyRoute } from '../framework/route.js';
import { LocalError } from './errors.js';
import type { FlagSpec, Invocation, Values } from './command.js';

/** `key_version` -> `key-version`. */
export function flagName(field: string): string {
  return field.replace(/_/g, '-');
}

/** `key_version` -> `keyVersion` (commander's attribute name). */
export function attributeName(field: string): string {
  return field.replace(/_(\w)/g, (_m, ch: string) => ch.toUpperCase());
}

/** Options of one derived flag. */
export interface FieldFlagOptions {
  /** Name of the value in help (`<n>`); default from the field's kind. */
  value?: string;
  /** Help text other than the field's own. */
  help?: string;
  parse?: FlagSpec['parse'];
  /** A bool field given as a bare switch (`--prehashed`), not `--prehashed [bool]`. */
  switch?: boolean;
}

const VALUE_NAME: Record<string, string> = { base64: 'b64', int: 'n', duration: 'duration' };

/** The flag of `route`'s field `field` (`key_version` -> `--key-version <n>`, sets key_version). */
export function fieldFlag(route: AnyRoute, field: string, o: FieldFlagOptions = {}): FlagSpec {
  const spec = route.fields[field]?.spec;
  if (!spec) throw new Error(`route ${route.path} declares no field ${field}`);
  const value = o.value ?? (spec.help.endsWith('(base64)') ? 'b64' : (VALUE_NAME[spec.kind] ?? 'value'));
  const flags = o.switch
    ? `--${flagName(field)}`
    : `--${flagName(field)} ${spec.kind === 'bool' ? '[bool]' : `<${value}>`}`;
  return { flags, help: o.help ?? spec.help, parse: o.parse, field };
}

/** The flags of several fields of `route`, in the order given. */
export function fieldFlags(route: AnyRoute, fields: ReadonlyArray<string | [string, FieldFlagOptions]>): FlagSpec[] {
  return fields.map((f) => (typeof f === 'string' ? fieldFlag(route, f) : fieldFlag(route, f[0], f[1])));
}

/** The route among `routes` whose path is `path`. */
export function routeAt(routes: readonly AnyRoute[], path: string): AnyRoute {
  const r = routes.find((x) => x.path === path);
  if (!r) throw new Error(`no route ${path}`);
  return r;
}

/** Request body entries of the flags that name a field and were given. */
export function bodyOf(flags: readonly FlagSpec[], opts: Values): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const f of flags) {
    if (!f.field) continue;
    const v = opts[attributeName(f.field)];
    if (v !== undefined) body[f.field] = v;
  }
  return body;
}

/**
 * Like bodyOf, for generated commands: a sensitive field is refused as a plain value (give @file or
 * -, so secrets never sit in argv) and `@file`/`-` values are read.
 */
export async function resolvedBodyOf(
  route: AnyRoute,
  flags: readonly FlagSpec[],
  inv: Invocation,
): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  for (const f of flags) {
    if (!f.field) continue;
    let v: unknown = inv.opts[attributeName(f.field)];
    if (v === undefined) continue;
    if (typeof v === 'string') {
      if (route.fields[f.field]?.spec.sensitive && !v.startsWith('@') && v !== '-')
        throw new LocalError(`--${flagName(f.field)} is secret: pass @file or - (stdin), not the value itself`);
      v = await inv.valueOf(v);
    }
    body[f.field] = v;
  }
  return body;
}

/** Like bodyOf, leaving out empty values ('' and false): what a flag given as `--ttl ''` never sent. */
export function givenOf(flags: readonly FlagSpec[], opts: Values): Record<string, unknown> {
  return Object.fromEntries(Object.entries(bodyOf(flags, opts)).filter(([, v]) => v !== '' && v !== false));
}
