/** How sync commands print: destinations flattened for tables, association status rows (coloured on a terminal). */
import type { ApiClient, Invocation } from '../../command.js';
import { LocalError, ServerError } from '../../errors.js';
import { grid } from '../../output.js';
import { colors } from '../../tty.js';
import { ALL_TYPE_IDS, canonicalType } from '../../../sync/type-aliases.js';
import type { DestinationType } from '../../../sync/types.js';

/** JSON merge patch requests. */
export const MERGE_PATCH = { 'Content-Type': 'application/merge-patch+json' };

/** A known destination type id (keyhold's or Vault's, as given: paths carry it), or a usage error naming the ids. */
export function typeArg(t: string): string {
  typeOfArg(t);
  return t;
}

/** The type a destination type id names (Vault's ids are aliases), or a usage error naming the ids. */
export function typeOfArg(t: string): DestinationType {
  const type = canonicalType(t);
  if (!type) throw new LocalError(`unknown destination type "${t}"; one of: ${ALL_TYPE_IDS.join(', ')}`);
  return type;
}

/** `sys/sync/destinations/TYPE/NAME[rest]`. */
export function destPath(type: string, name: string, rest = ''): string {
  return `sys/sync/destinations/${encodeURIComponent(type)}/${encodeURIComponent(name)}${rest}`;
}

/** Flatten a destination view for the table format. */
export function flatDestination(d: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { name: d.name, type: d.type };
  for (const [k, v] of Object.entries((d.connection_details ?? {}) as Record<string, unknown>)) out[k] = v;
  for (const [k, v] of Object.entries((d.options ?? {}) as Record<string, unknown>)) out[k] = v;
  if (d.purge_initiated_at) out.purge_initiated_at = d.purge_initiated_at;
  if (d.purge_error) out.purge_error = d.purge_error;
  return out;
}

/** Whether the output is the default table. */
export function wantsTable(inv: Invocation): boolean {
  return !inv.globals.field && (inv.globals.format ?? 'table') === 'table';
}

/** A destination as printed: flattened in a table, as the API gives it otherwise. */
export function printDestination(inv: Invocation, data: Record<string, unknown>): Promise<void> {
  return inv.print(wantsTable(inv) ? flatDestination(data) : data);
}

/** One row of `sync status`. */
export interface StatusRow {
  destination: string;
  mount: string;
  secret_name: string;
  sub_key: string;
  sync_status: string;
  updated_at: string;
  error: string;
}

/** The status rows of one destination's associations answer. */
export function rowsOf(type: string, name: string, data: Record<string, unknown>): StatusRow[] {
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

/** Print status rows: a coloured table, or the rows per --format. */
export async function printRows(inv: Invocation, rows: StatusRow[]): Promise<void> {
  if (!wantsTable(inv)) return inv.print(rows);
  if (rows.length === 0) {
    inv.io.stderr.write('No associations.\n');
    return;
  }
  const c = colors();
  const paint = (s: string) =>
    s === 'SYNCED'
      ? c.green(s)
      : s === 'PENDING'
        ? c.yellow(s)
        : s === 'SYNCING' || s === 'UNSYNCING'
          ? c.cyan(s)
          : s === 'UNSYNCED'
            ? c.dim(s)
            : s === 'UNKNOWN'
              ? c.magenta(s)
              : c.red(s);
  inv.io.stdout.write(
    grid(
      ['DESTINATION', 'MOUNT', 'SECRET', 'SUB KEY', 'STATUS', 'UPDATED', 'ERROR'],
      rows.map((r) => [r.destination, r.mount, r.secret_name, r.sub_key, paint(r.sync_status), r.updated_at, r.error]),
    ),
  );
}

/** LIST that treats 404 (nothing there) as empty. */
export async function listOrEmpty(client: ApiClient, path: string): Promise<Record<string, unknown>> {
  try {
    const r = await client.list(path);
    return (r.body?.data ?? {}) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof ServerError && e.status === 404) return {};
    throw e;
  }
}
