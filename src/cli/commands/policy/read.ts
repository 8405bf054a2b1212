/** `keyhold policy read NAME`: the policy text (or its JSON with --format). */
import type { CommandSpec } from '../../command.js';

export const read: CommandSpec = {
  words: ['policy', 'read'],
  summary: 'Print a policy',
  args: [{ name: 'name' }],
  async run(inv) {
    const res = await inv.client.read(`sys/policies/acl/${encodeURIComponent(inv.args.name)}`);
    const g = inv.globals;
    if (!g.format || g.format === 'table')
      inv.io.stdout.write(String(((res.body?.data ?? {}) as Record<string, unknown>).policy) + '\n');
    else await inv.print(res.body?.data);
  },
};
