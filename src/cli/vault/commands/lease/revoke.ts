/** `vault lease revoke [-prefix] [-force] [-sync] ID`: revoke a lease, or every lease under a prefix. */
import { flag, type CommandSpec } from '../../../command.js';
import { LocalError } from '../../../errors.js';

export const revoke: CommandSpec = {
  words: ['lease', 'revoke'],
  summary: 'Revoke a lease, or all leases under a prefix (-prefix); keyhold issues none',
  args: [{ name: 'id', help: 'lease id or prefix' }],
  flags: [
    flag('--prefix', 'revoke every lease under the id taken as a prefix'),
    flag('-f, --force', 'with -prefix: remove the leases even if the backend fails'),
    flag('--sync', 'wait for the revocation (accepted)'),
  ],
  examples: ['vault lease revoke database/creds/readonly/2f6a614c', 'vault lease revoke -prefix database/creds/'],
  async run(inv) {
    const id = String(inv.args.id);
    const o = inv.opts;
    if (o.force && !o.prefix) throw new LocalError('-force requires -prefix');
    const enc = id.split('/').map(encodeURIComponent).join('/');
    if (o.force) await inv.client.write(`sys/leases/revoke-force/${enc}`, {});
    else if (o.prefix) await inv.client.write(`sys/leases/revoke-prefix/${enc}`, { sync: Boolean(o.sync) });
    else await inv.client.write('sys/leases/revoke', { lease_id: id, sync: Boolean(o.sync) });
    inv.success(o.prefix ? `Success! Revoked any leases with prefix: ${id}` : `Success! Revoked lease: ${id}`);
  },
};
