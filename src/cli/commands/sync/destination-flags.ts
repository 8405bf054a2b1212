/**
 * The flags of `sync dest create|update`: one per connection field of every destination type (from the
 * types' declared fields, src/sync/destinations) and the options every type takes. Sensitive fields
 * (tokens, secrets, credentials) are taken only as `@file` or `-` (stdin), never as values in argv.
 */
import { collect, type FlagSpec, type Invocation } from '../../command.js';
import { LocalError } from '../../errors.js';
import { DESTINATION_TYPES } from '../../../sync/destinations/index.js';
import { DESTINATION_TYPE_IDS, type DestinationType } from '../../../sync/types.js';

/** Options taken by every type (field -> flag help). */
const OPTION_FLAGS: Array<{
  field: string;
  flag: string;
  help: string;
  list?: 'strings' | 'ints' | 'map';
  bool?: boolean;
}> = [
  {
    field: 'secret_name_template',
    flag: '--secret-name-template <tmpl>',
    help: 'external name template, e.g. "app/{{ .SecretPath }}" ("" restores the default)',
  },
  {
    field: 'granularity',
    flag: '--granularity <g>',
    help: 'secret-path (whole secret as JSON) or secret-key (one external secret per key)',
  },
  {
    field: 'custom_tags',
    flag: '--custom-tag <k=v>',
    help: 'tag added to every external secret (repeatable)',
    list: 'map',
  },
  {
    field: 'allowed_ipv4_addresses',
    flag: '--allowed-ipv4-address <cidr>',
    help: 'extra IPv4 CIDR the connector may reach (repeatable or comma list)',
    list: 'strings',
  },
  {
    field: 'allowed_ipv6_addresses',
    flag: '--allowed-ipv6-address <cidr>',
    help: 'extra IPv6 CIDR the connector may reach (repeatable or comma list)',
    list: 'strings',
  },
  {
    field: 'allowed_ports',
    flag: '--allowed-port <port>',
    help: 'extra port besides 80 and 443 (repeatable or comma list)',
    list: 'ints',
  },
  {
    field: 'disable_strict_networking',
    flag: '--disable-strict-networking',
    help: 'turn the network guard off',
    bool: true,
  },
];

interface ConnectionField {
  types: DestinationType[];
  sensitive: boolean;
  help: string;
  list: boolean;
}

/** Every connection field of every type, with where it applies and whether it is sensitive. */
function connectionFields(): Map<string, ConnectionField> {
  const out = new Map<string, ConnectionField>();
  for (const t of DESTINATION_TYPE_IDS) {
    for (const [name, field] of Object.entries(DESTINATION_TYPES[t].fields)) {
      const cur = out.get(name) ?? {
        types: [],
        sensitive: false,
        help: field.spec.help,
        list: field.spec.kind === 'strings',
      };
      cur.types.push(t);
      cur.sensitive ||= Boolean(field.spec.sensitive);
      out.set(name, cur);
    }
  }
  return out;
}

const flagOf = (field: string) => '--' + field.replace(/_/g, '-');
const camel = (s: string) => s.replace(/[-_]([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
/** `--custom-tag <k=v>` -> customTag. */
const attributeOf = (flags: string) => camel(flags.split(' ')[0]!.slice(2));

/** The connection and option flags of create/update. */
export function destinationFlags(): FlagSpec[] {
  const out: FlagSpec[] = [];
  for (const [field, info] of connectionFields()) {
    const help = `${info.help} [${info.types.join(', ')}]${info.sensitive ? ' (sensitive: @file or - for stdin)' : ''}`;
    out.push({ flags: `${flagOf(field)} <value>`, help, parse: info.list ? collect : undefined });
  }
  for (const o of OPTION_FLAGS) out.push({ flags: o.flag, help: o.help, parse: o.list ? collect : undefined });
  return out;
}

/** The option values given (custom tags, lists, the strict-networking switch). */
function optionValues(opts: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const o of OPTION_FLAGS) {
    const v = opts[attributeOf(o.flag)];
    if (v === undefined) continue;
    if (o.bool) body[o.field] = true;
    else if (o.list === 'map') {
      const tags: Record<string, string> = {};
      for (const kv of v as string[]) {
        const i = kv.indexOf('=');
        if (i <= 0) throw new LocalError(`--custom-tag expects key=value, got "${kv}"`);
        tags[kv.slice(0, i)] = kv.slice(i + 1);
      }
      body[o.field] = tags;
    } else if (o.list) {
      const items = (v as string[])
        .flatMap((s) => s.split(','))
        .map((s) => s.trim())
        .filter(Boolean);
      body[o.field] = o.list === 'ints' ? items.map((s) => (/^\d+$/.test(s) ? Number(s) : s)) : items;
    } else body[o.field] = v;
  }
  return body;
}

/** Build the request body of a create/update from flags and pairs; refuses secrets in argv. */
export async function destinationBody(
  inv: Invocation,
  type: DestinationType,
  pairs: string[],
): Promise<Record<string, unknown>> {
  const opts = inv.opts;
  const fields = DESTINATION_TYPES[type].fields;
  const conn = connectionFields();
  const body: Record<string, unknown> = {};
  const put = async (field: string, raw: unknown, via: string) => {
    const info = conn.get(field);
    if (info && !info.types.includes(type))
      throw new LocalError(`${via} does not apply to ${type}; its fields: ${Object.keys(fields).join(', ')}`);
    if (info?.sensitive) {
      const s = String(raw);
      if (s !== '-' && !s.startsWith('@'))
        throw new LocalError(
          `${field} is sensitive: give it as @file or - (stdin), never as a value on the command line`,
        );
      body[field] = (await inv.valueOf(s)).replace(/\r?\n$/, '');
      return;
    }
    body[field] = raw;
  };
  for (const [field, info] of conn) {
    const v = opts[camel(field)];
    if (v === undefined) continue;
    await put(
      field,
      info.list
        ? (v as string[])
            .flatMap((s) => s.split(','))
            .map((s) => s.trim())
            .filter(Boolean)
        : v,
      flagOf(field),
    );
  }
  Object.assign(body, optionValues(opts));
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0) throw new LocalError(`expected key=value, got "${p}"`);
    const k = p.slice(0, i);
    const raw = p.slice(i + 1);
    if (conn.get(k)?.sensitive) await put(k, raw, k);
    else {
      const parsed = await inv.parsePairs([`${k}=${raw}`]);
      await put(k, parsed[k], k);
    }
  }
  return body;
}
