/** `keyhold auth list [--detailed]`. */
import { flag, type CommandSpec } from '../../command.js';
import { grid } from '../../output.js';

export const list: CommandSpec = {
  words: ['auth', 'list'],
  summary: 'List enabled auth methods',
  flags: [flag('--detailed', 'show accessors, TTLs and token types')],
  async run(inv) {
    const res = await inv.client.read('sys/auth');
    const data = (res.body?.data ?? {}) as Record<string, Record<string, unknown>>;
    if (inv.globals.format || inv.globals.field) return inv.print(data);
    const detailed = Boolean(inv.opts.detailed || inv.globals.detailed);
    const rows = Object.keys(data)
      .sort()
      .map((p) => {
        const m = data[p]!;
        const c = (m.config ?? {}) as Record<string, unknown>;
        return detailed
          ? [
              p,
              String(m.type),
              String(m.accessor),
              String(c.default_lease_ttl || 'system'),
              String(c.max_lease_ttl || 'system'),
              String(c.token_type),
              String(m.description),
            ]
          : [p, String(m.type), String(m.accessor), String(m.description)];
      });
    inv.io.stdout.write(
      grid(
        detailed
          ? ['Path', 'Type', 'Accessor', 'Default TTL', 'Max TTL', 'Token Type', 'Description']
          : ['Path', 'Type', 'Accessor', 'Description'],
        rows,
      ),
    );
  },
};
