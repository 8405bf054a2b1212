/** `keyhold secrets list [--detailed]`: the mounts as a table (or JSON). */
import { flag, type CommandSpec } from '../../command.js';
import { grid } from '../../output.js';
import { goValue, humanDuration } from '../../secret-output.js';

type Mount = Record<string, unknown> & { config?: Record<string, unknown> };

/** A mount TTL as the vault CLI's detailed list shows it: `system` when the mount has none of its own. */
const ttl = (v: unknown) => (!v || v === 0 || v === '0' ? 'system' : humanDuration(v));

/** vault's `secrets list -detailed` row [vault src command/secrets_list.go]. */
function detailedRow(path: string, m: Mount): string[] {
  const c = m.config ?? {};
  return [
    path,
    String(m.type),
    String(m.accessor),
    ttl(c.default_lease_ttl),
    ttl(c.max_lease_ttl),
    String(Boolean(c.force_no_cache)),
    m.local ? 'local' : 'replicated',
    String(Boolean(m.seal_wrap)),
    String(Boolean(m.external_entropy_access)),
    m.options && Object.keys(m.options as object).length ? goValue(m.options) : 'map[]',
    String(m.description ?? ''),
    String(m.uuid ?? ''),
  ];
}

export const list: CommandSpec = {
  words: ['secrets', 'list'],
  summary: 'List mounted engines',
  flags: [flag('--detailed', 'show TTLs, replication, seal wrapping, options and UUIDs')],
  async run(inv) {
    const res = await inv.client.read('sys/mounts');
    const data = (res.body?.data ?? {}) as Record<string, Mount>;
    if (inv.globals.format && inv.globals.format !== 'table') return inv.print(data);
    const sorted = Object.entries(data).sort(([a], [b]) => a.localeCompare(b));
    if (inv.opts.detailed || inv.globals.detailed) {
      const headers = ['Path', 'Plugin', 'Accessor', 'Default TTL', 'Max TTL', 'Force No Cache', 'Replication'];
      headers.push('Seal Wrap', 'External Entropy Access', 'Options', 'Description', 'UUID');
      inv.io.stdout.write(
        grid(
          headers,
          sorted.map(([p, m]) => detailedRow(p, m)),
        ),
      );
      return;
    }
    const rows = sorted.map(([p, m]) => [p, String(m.type), String(m.accessor), String(m.description ?? '')]);
    inv.io.stdout.write(grid(['Path', 'Type', 'Accessor', 'Description'], rows));
  },
};
