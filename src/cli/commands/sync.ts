/**
 * `keyhold sync ...`: destinations, associations, status and config of secret sync.
 * Connection fields are flags (`--client-id x`) or `key=value` pairs; sensitive fields (tokens,
 * secrets, credentials) are taken only as `@file` or `-` (stdin), never as values in argv.
 */
import { Command, Option } from 'commander';
import type { CliContext } from '../context.js';
import { LocalError, ServerError, type Client } from '../client.js';
import { grid } from '../output.js';
import { colors } from '../tty.js';
import { DESTINATION_TYPES } from '../../sync/destinations/index.js';
import { DESTINATION_TYPE_IDS, isDestinationType, type DestinationType } from '../../sync/types.js';

const MERGE_PATCH = { 'Content-Type': 'application/merge-patch+json' };

/** Options taken by every type (field -> flag help). */
const OPTION_FLAGS: Array<{ field: string; flag: string; help: string; list?: 'strings' | 'ints' | 'map'; bool?: boolean }> = [
  { field: 'secret_name_template', flag: '--secret-name-template <tmpl>', help: 'external name template, e.g. "app/{{ .SecretPath }}" ("" restores the default)' },
  { field: 'granularity', flag: '--granularity <g>', help: 'secret-path (whole secret as JSON) or secret-key (one external secret per key)' },
  { field: 'custom_tags', flag: '--custom-tag <k=v>', help: 'tag added to every external secret (repeatable)', list: 'map' },
  { field: 'allowed_ipv4_addresses', flag: '--allowed-ipv4-address <cidr>', help: 'extra IPv4 CIDR the connector may reach (repeatable or comma list)', list: 'strings' },
  { field: 'allowed_ipv6_addresses', flag: '--allowed-ipv6-address <cidr>', help: 'extra IPv6 CIDR the connector may reach (repeatable or comma list)', list: 'strings' },
  { field: 'allowed_ports', flag: '--allowed-port <port>', help: 'extra port besides 80 and 443 (repeatable or comma list)', list: 'ints' },
  { field: 'disable_strict_networking', flag: '--disable-strict-networking', help: 'turn the network guard off', bool: true },
];

/** Every connection field of every type, with where it applies and whether it is sensitive. */
function connectionFields(): Map<string, { types: DestinationType[]; sensitive: boolean; help: string; list: boolean }> {
  const out = new Map<string, { types: DestinationType[]; sensitive: boolean; help: string; list: boolean }>();
  for (const t of DESTINATION_TYPE_IDS) {
    for (const [name, field] of Object.entries(DESTINATION_TYPES[t].fields)) {
      const cur = out.get(name) ?? { types: [], sensitive: false, help: field.spec.help, list: field.spec.kind === 'strings' };
      cur.types.push(t);
      cur.sensitive ||= Boolean(field.spec.sensitive);
      out.set(name, cur);
    }
  }
  return out;
}

const flagOf = (field: string) => '--' + field.replace(/_/g, '-');
const camel = (field: string) => field.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
const collect = (v: string, prev: string[] = []) => [...prev, v];

function typeArg(t: string): DestinationType {
  if (!isDestinationType(t)) throw new LocalError(`unknown destination type "${t}"; one of: ${DESTINATION_TYPE_IDS.join(', ')}`);
  return t;
}

function destPath(type: string, name: string, rest = ''): string {
  return `sys/sync/destinations/${encodeURIComponent(type)}/${encodeURIComponent(name)}${rest}`;
}

/** Add connection and option flags to a create/update command. */
function addDestinationFlags(cmd: Command): Command {
  for (const [field, info] of connectionFields()) {
    const help = `${info.help} [${info.types.join(', ')}]${info.sensitive ? ' (sensitive: @file or - for stdin)' : ''}`;
    const opt = new Option(`${flagOf(field)} <value>`, help);
    if (info.list) opt.argParser(collect);
    cmd.addOption(opt);
  }
  for (const o of OPTION_FLAGS) {
    const opt = new Option(o.flag, o.help);
    if (o.list) opt.argParser(collect);
    cmd.addOption(opt);
  }
  cmd.argument('[pairs...]', 'more fields as key=value (sensitive ones as key=@file or key=-)');
  return cmd;
}

/** Build the request body of a create/update from flags and pairs; refuses secrets in argv. */
async function destinationBody(ctx: CliContext, type: DestinationType, opts: Record<string, unknown>, pairs: string[]): Promise<Record<string, unknown>> {
  const fields = DESTINATION_TYPES[type].fields;
  const conn = connectionFields();
  const body: Record<string, unknown> = {};
  const put = async (field: string, raw: unknown, via: string) => {
    const info = conn.get(field);
    if (info && !info.types.includes(type)) throw new LocalError(`${via} does not apply to ${type}; its fields: ${Object.keys(fields).join(', ')}`);
    if (info?.sensitive) {
      const s = String(raw);
      if (s !== '-' && !s.startsWith('@')) throw new LocalError(`${field} is sensitive: give it as @file or - (stdin), never as a value on the command line`);
      body[field] = (await ctx.valueOf(s)).replace(/\r?\n$/, '');
      return;
    }
    body[field] = raw;
  };
  for (const [field, info] of conn) {
    const v = opts[camel(field)];
    if (v === undefined) continue;
    await put(field, info.list ? (v as string[]).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean) : v, flagOf(field));
  }
  for (const o of OPTION_FLAGS) {
    const v = opts[new Option(o.flag).attributeName()];
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
      const items = (v as string[]).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
      body[o.field] = o.list === 'ints' ? items.map((s) => (/^\d+$/.test(s) ? Number(s) : s)) : items;
    } else body[o.field] = v;
  }
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0) throw new LocalError(`expected key=value, got "${p}"`);
    const k = p.slice(0, i);
    const raw = p.slice(i + 1);
    if (conn.get(k)?.sensitive) await put(k, raw, k);
    else {
      const parsed = await ctx.parsePairs([`${k}=${raw}`]);
      await put(k, parsed[k], k);
    }
  }
  return body;
}

/** Flatten a destination view for the table format. */
function flatDestination(d: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { name: d.name, type: d.type };
  for (const [k, v] of Object.entries((d.connection_details ?? {}) as Record<string, unknown>)) out[k] = v;
  for (const [k, v] of Object.entries((d.options ?? {}) as Record<string, unknown>)) out[k] = v;
  if (d.purge_initiated_at) out.purge_initiated_at = d.purge_initiated_at;
  if (d.purge_error) out.purge_error = d.purge_error;
  return out;
}

function wantsTable(ctx: CliContext, cmd: Command): boolean {
  const g = ctx.globals(cmd);
  return !g.field && (g.format ?? 'table') === 'table';
}

/** One row of `sync status`. */
interface StatusRow {
  destination: string;
  mount: string;
  secret_name: string;
  sub_key: string;
  sync_status: string;
  updated_at: string;
  error: string;
}

function rowsOf(type: string, name: string, data: Record<string, unknown>): StatusRow[] {
  const recs = (data.associated_secrets ?? {}) as Record<string, Record<string, unknown>>;
  return Object.keys(recs)
    .sort()
    .map((k) => {
      const r = recs[k]!;
      return {
        destination: `${type}/${name}`,
        mount: String(r.mount ?? r.accessor ?? ''),
        secret_name: String(r.secret_name ?? ''),
        sub_key: String(r.sub_key ?? ''),
        sync_status: String(r.sync_status ?? ''),
        updated_at: String(r.updated_at ?? ''),
        error: String(r.error ?? ''),
      };
    });
}

async function printRows(ctx: CliContext, cmd: Command, rows: StatusRow[]): Promise<void> {
  if (!wantsTable(ctx, cmd)) return ctx.print(cmd, rows);
  if (rows.length === 0) {
    process.stderr.write('No associations.\n');
    return;
  }
  const c = colors();
  const paint = (s: string) => (s === 'SYNCED' ? c.green(s) : s === 'PENDING' ? c.yellow(s) : s === 'SYNCING' || s === 'UNSYNCING' ? c.cyan(s) : s === 'UNSYNCED' ? c.dim(s) : s === 'UNKNOWN' ? c.magenta(s) : c.red(s));
  process.stdout.write(
    grid(
      ['DESTINATION', 'MOUNT', 'SECRET', 'SUB KEY', 'STATUS', 'UPDATED', 'ERROR'],
      rows.map((r) => [r.destination, r.mount, r.secret_name, r.sub_key, paint(r.sync_status), r.updated_at, r.error]),
    ),
  );
}

/** LIST that treats 404 (nothing there) as empty. */
async function listOrEmpty(client: Client, path: string): Promise<Record<string, unknown>> {
  try {
    const r = await client.list(path);
    return (r.body?.data ?? {}) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof ServerError && e.status === 404) return {};
    throw e;
  }
}

/** Register the sync commands. */
export function register(program: Command, ctx: CliContext): void {
  const sync = program.command('sync').description('Secret sync: push KV v2 secrets to external secret stores');
  const dest = sync.command('dest').alias('destination').description(`Sync destinations (types: ${DESTINATION_TYPE_IDS.join(', ')})`);

  addDestinationFlags(
    dest
      .command('create')
      .description('Create (or update) a destination; credentials only from @file or - (stdin)')
      .argument('<type>', `destination type: ${DESTINATION_TYPE_IDS.join(', ')}`)
      .argument('<name>', 'destination name'),
  )
    .addHelpText('after', `\nExamples:\n  keyhold sync dest create provider-b-kv prod --key-vault-uri https://v.vault.azure.net --client-id ID --tenant-id TENANT --client-secret @secret.txt\n  printf %s "$TOKEN" | keyhold sync dest create repohost gh --repository-owner acme --repository-name app --access-token -\n  keyhold sync dest create provider-c-sm gcp --credentials @sa.json --granularity secret-key`)
    .action(async (type: string, name: string, pairs: string[], opts: Record<string, unknown>, cmd: Command) => {
      const t = typeArg(type);
      const body = await destinationBody(ctx, t, opts, pairs);
      const r = await ctx.client(cmd).write(destPath(t, name), body);
      const data = (r.body?.data ?? {}) as Record<string, unknown>;
      for (const w of (r.body?.warnings as string[] | null) ?? []) process.stderr.write(`WARNING: ${w}\n`);
      await ctx.print(cmd, wantsTable(ctx, cmd) ? flatDestination(data) : data);
    });

  addDestinationFlags(
    dest
      .command('update')
      .description('Change fields of an existing destination (JSON merge patch; omitted fields keep their values)')
      .argument('<type>', 'destination type')
      .argument('<name>', 'destination name'),
  ).action(async (type: string, name: string, pairs: string[], opts: Record<string, unknown>, cmd: Command) => {
    const t = typeArg(type);
    const body = await destinationBody(ctx, t, opts, pairs);
    if (Object.keys(body).length === 0) throw new LocalError('nothing to update: give at least one field');
    const r = await ctx.client(cmd).request('PATCH', destPath(t, name), body, { headers: MERGE_PATCH });
    const data = (r.body?.data ?? {}) as Record<string, unknown>;
    await ctx.print(cmd, wantsTable(ctx, cmd) ? flatDestination(data) : data);
  });

  dest
    .command('read')
    .description('Show a destination (sensitive values masked as *****)')
    .argument('<type>', 'destination type')
    .argument('<name>', 'destination name')
    .action(async (type: string, name: string, _o: unknown, cmd: Command) => {
      const r = await ctx.client(cmd).read(destPath(typeArg(type), name));
      const data = (r.body?.data ?? {}) as Record<string, unknown>;
      await ctx.print(cmd, wantsTable(ctx, cmd) ? flatDestination(data) : data);
    });

  dest
    .command('list')
    .description('List destinations (all types, or one)')
    .argument('[type]', 'only this type')
    .action(async (type: string | undefined, _o: unknown, cmd: Command) => {
      const client = ctx.client(cmd);
      if (type) {
        const data = await listOrEmpty(client, `sys/sync/destinations/${encodeURIComponent(typeArg(type))}`);
        return ctx.print(cmd, wantsTable(ctx, cmd) ? ((data.keys as string[]) ?? []) : data);
      }
      const data = await listOrEmpty(client, 'sys/sync/destinations');
      if (!wantsTable(ctx, cmd)) return ctx.print(cmd, data);
      const info = (data.key_info ?? {}) as Record<string, string[]>;
      const rows = Object.keys(info)
        .sort()
        .flatMap((k) => info[k]!.map((n) => [k.replace(/\/$/, ''), n]));
      if (rows.length === 0) process.stderr.write('No destinations.\n');
      else process.stdout.write(grid(['TYPE', 'NAME'], rows));
    });

  dest
    .command('delete')
    .description('Delete a destination (refused while it has associations unless --purge or --force)')
    .argument('<type>', 'destination type')
    .argument('<name>', 'destination name')
    .option('--purge', 'unsync every associated secret, remove the associations, then delete (asynchronous)')
    .option('--force', 'delete at once even with associations; external secrets are left behind')
    .action(async (type: string, name: string, opts: { purge?: boolean; force?: boolean }, cmd: Command) => {
      const q: Record<string, string> = {};
      if (opts.purge) q.purge = 'true';
      if (opts.force) q.force_delete = 'true';
      const r = await ctx.client(cmd).delete(destPath(typeArg(type), name), q);
      if (r.status === 200 && r.body?.data) {
        process.stderr.write(`Purge of ${type}/${name} started; it is deleted once every secret is unsynced.\n`);
        await ctx.print(cmd, wantsTable(ctx, cmd) ? flatDestination(r.body.data as Record<string, unknown>) : r.body.data);
      } else process.stderr.write(`Success! Deleted destination ${type}/${name}.\n`);
    });

  const assoc = sync.command('assoc').alias('association').description('Associations between KV v2 secrets and destinations');
  const assocTarget = (c: Command) =>
    c
      .argument('<type>', 'destination type')
      .argument('<name>', 'destination name')
      .requiredOption('--mount <path>', 'mount path of the KV v2 engine, e.g. secret')
      .requiredOption('--secret <name>', 'secret path within the mount, e.g. app/db');

  assocTarget(assoc.command('set').description('Associate a secret with a destination (or refresh it, retrying a failed sync)')).action(
    async (type: string, name: string, opts: { mount: string; secret: string }, cmd: Command) => {
      const r = await ctx.client(cmd).write(destPath(typeArg(type), name, '/associations/set'), { mount: opts.mount, secret_name: opts.secret });
      const data = (r.body?.data ?? {}) as Record<string, unknown>;
      if (!wantsTable(ctx, cmd)) return ctx.print(cmd, data);
      await printRows(ctx, cmd, rowsOf(type, name, data).filter((row) => row.secret_name === opts.secret.replace(/^\/+/, '')));
    },
  );

  assocTarget(assoc.command('remove').description('Remove an association; the secret is deleted at the destination')).action(
    async (type: string, name: string, opts: { mount: string; secret: string }, cmd: Command) => {
      const r = await ctx.client(cmd).write(destPath(typeArg(type), name, '/associations/remove'), { mount: opts.mount, secret_name: opts.secret });
      const data = (r.body?.data ?? {}) as Record<string, unknown>;
      if (!wantsTable(ctx, cmd)) return ctx.print(cmd, data);
      const rows = rowsOf(type, name, data).filter((row) => row.secret_name === opts.secret.replace(/^\/+/, ''));
      if (rows.length) await printRows(ctx, cmd, rows);
      else process.stderr.write('Success! No such association (nothing to remove).\n');
    },
  );

  assoc
    .command('list')
    .description('List associations: of one destination (with status), or every associated secret')
    .argument('[type]', 'destination type')
    .argument('[name]', 'destination name')
    .action(async (type: string | undefined, name: string | undefined, _o: unknown, cmd: Command) => {
      const client = ctx.client(cmd);
      if (type) {
        if (!name) throw new LocalError('give both <type> and <name>, or neither');
        const r = await client.read(destPath(typeArg(type), name, '/associations'));
        const data = (r.body?.data ?? {}) as Record<string, unknown>;
        return wantsTable(ctx, cmd) ? printRows(ctx, cmd, rowsOf(type, name, data)) : ctx.print(cmd, data);
      }
      const data = await listOrEmpty(client, 'sys/sync/associations');
      if (!wantsTable(ctx, cmd)) return ctx.print(cmd, data);
      const info = (data.key_info ?? {}) as Record<string, Array<{ type?: string; name?: string }>>;
      const rows = ((data.keys as string[]) ?? []).map((k) => [k, (info[k] ?? []).map((d) => `${d.type}/${d.name}`).join(', ')]);
      if (rows.length === 0) process.stderr.write('No associations.\n');
      else process.stdout.write(grid(['SECRET', 'DESTINATIONS'], rows));
    });

  sync
    .command('status')
    .description('Sync status of every association (coloured on a terminal)')
    .option('--type <type>', 'only destinations of this type')
    .option('--name <name>', 'only destinations with this name')
    .option('--failed', 'only associations whose last operation failed')
    .option('--watch [seconds]', 'print the status again every SECONDS (default 2) until Ctrl-C')
    .addHelpText('after', '\nExamples:\n  $ keyhold sync status --failed\n  $ keyhold sync status --type repohost --watch 5')
    .action(async (opts: { type?: string; name?: string; failed?: boolean; watch?: string | true }, cmd: Command) => {
      const client = ctx.client(cmd);
      if (opts.type) typeArg(opts.type);
      if (opts.watch === undefined) return printRows(ctx, cmd, await statusRows(client, opts));
      const seconds = opts.watch === true ? 2 : Number(opts.watch);
      if (!Number.isFinite(seconds) || seconds < 0.1 || seconds > 86_400) throw new LocalError('--watch: SECONDS must be a number from 0.1 to 86400');
      // Runs until Ctrl-C, which ends the CLI with 130 (src/cli/signals.ts). On a terminal each round
      // redraws the screen, like watch(1); into a pipe the rounds follow each other, a blank line apart.
      const tty = process.stdout.isTTY === true;
      for (let round = 0; ; round++) {
        const rows = await statusRows(client, opts);
        if (tty) process.stdout.write('\x1b[H\x1b[2J');
        else if (round > 0) process.stdout.write('\n');
        if (tty) process.stdout.write(`Every ${seconds}s: keyhold sync status (Ctrl-C to stop)\n\n`);
        await printRows(ctx, cmd, rows);
        await new Promise((r) => setTimeout(r, seconds * 1000));
      }
    });

  /** The status rows of every association of the destinations selected by `opts`. */
  async function statusRows(client: Client, opts: { type?: string; name?: string; failed?: boolean }): Promise<StatusRow[]> {
    const data = await listOrEmpty(client, 'sys/sync/destinations');
    const info = (data.key_info ?? {}) as Record<string, string[]>;
    let rows: StatusRow[] = [];
    for (const k of Object.keys(info).sort()) {
      const type = k.replace(/\/$/, '');
      if (opts.type && type !== opts.type) continue;
      for (const name of info[k]!) {
        if (opts.name && name !== opts.name) continue;
        const r = await client.read(destPath(type, name, '/associations'));
        rows.push(...rowsOf(type, name, (r.body?.data ?? {}) as Record<string, unknown>));
      }
    }
    if (opts.failed) rows = rows.filter((r) => !['SYNCED', 'UNSYNCED', 'PENDING', 'SYNCING', 'UNSYNCING'].includes(r.sync_status));
    return rows;
  }

  sync
    .command('config')
    .description('Show or change the global sync configuration')
    .addOption(new Option('--disabled <bool>', 'true stops all outbound sync (operations wait as PENDING)').choices(['true', 'false']))
    .option('--queue-capacity <n>', 'upper bound on queued operations')
    .option('--reset', 'restore the defaults')
    .action(async (opts: { disabled?: string; queueCapacity?: string; reset?: boolean }, cmd: Command) => {
      const client = ctx.client(cmd);
      if (opts.reset) {
        await client.delete('sys/sync/config');
        process.stderr.write('Success! Sync configuration reset to defaults.\n');
        return;
      }
      const body: Record<string, unknown> = {};
      if (opts.disabled !== undefined) body.disabled = opts.disabled === 'true';
      if (opts.queueCapacity !== undefined) {
        if (!/^\d+$/.test(opts.queueCapacity) || Number(opts.queueCapacity) < 1) throw new LocalError('--queue-capacity must be a positive integer');
        body.queue_capacity = Number(opts.queueCapacity);
      }
      const r = Object.keys(body).length ? await client.request('PATCH', 'sys/sync/config', body, { headers: MERGE_PATCH }) : await client.read('sys/sync/config');
      await ctx.print(cmd, r.body?.data ?? {});
    });
}
