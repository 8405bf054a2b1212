/** Moving a mount (`vault secrets move`, `vault auth move`): sys/remount, then its status until it ends. */
import type { Invocation } from '../command.js';
import { ServerError } from '../errors.js';

/** Start the move of `from` to `to` and wait (up to ~60 s) for it to succeed; a failure exits 2. */
export async function moveMount(inv: Invocation, from: string, to: string, what: string): Promise<void> {
  const res = await inv.client.write('sys/remount', { from, to });
  const id = String((res.body?.data as { migration_id?: string } | undefined)?.migration_id ?? '');
  inv.io.stdout.write(`Started moving ${what} ${from} to ${to}, with migration ID ${id}\n`);
  for (let i = 0; i < 600; i++) {
    const st = await inv.client.read(`sys/remount/status/${encodeURIComponent(id)}`);
    const info = ((st.body?.data as { migration_info?: { status?: string; message?: string } } | undefined)
      ?.migration_info ?? {}) as { status?: string; message?: string };
    if (info.status === 'success')
      return inv.success(`Success! Finished moving ${what} ${from} to ${to}, with migration ID ${id}`);
    if (info.status === 'failure')
      throw new ServerError(500, [`moving ${from} to ${to} failed: ${info.message ?? 'no reason given'}`], st.body);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new ServerError(504, [`moving ${from} to ${to} did not finish; check sys/remount/status/${id}`], null);
}

/** A mount path as the API takes it (no slashes around). */
export const trimSlashes = (p: string): string => p.replace(/^\/+|\/+$/g, '');
