/** `vault secrets tune [flags] PATH`: a mount's description, options and TTLs (sys/mounts/PATH/tune). */
import { collect, flag, type CommandSpec } from '../../../command.js';
import { LocalError } from '../../../errors.js';
import { kvPairs } from '../../pairs.js';

export const tune: CommandSpec = {
  words: ['secrets', 'tune'],
  summary: 'Tune a secrets engine: description, options (-options=k=v), -version, TTLs',
  args: [{ name: 'path', help: 'mount path' }],
  flags: [
    flag('--description <text>', 'new description'),
    flag('--options <k=v>', 'engine option (repeatable)', { parse: collect }),
    flag('--version <n>', 'engine version (kv: 2 upgrades a version 1 mount)'),
    flag('--default-lease-ttl <duration>', 'default lease TTL'),
    flag('--max-lease-ttl <duration>', 'maximum lease TTL'),
    flag('--listing-visibility <v>', 'accepted'),
    flag('--audit-non-hmac-request-keys <key>', 'accepted', { parse: collect }),
    flag('--audit-non-hmac-response-keys <key>', 'accepted', { parse: collect }),
    flag('--passthrough-request-headers <h>', 'accepted', { parse: collect }),
    flag('--allowed-response-headers <h>', 'accepted', { parse: collect }),
    flag('--allowed-managed-keys <name>', 'managed keys this mount may use (repeatable; replaces the list)', {
      parse: collect,
    }),
    flag('--plugin-version <v>', 'accepted', { hidden: true }),
  ],
  examples: ['vault secrets tune -description="team secrets" secret/', 'vault secrets tune -options=version=2 kv/'],
  async run(inv) {
    const o = inv.opts;
    const path = String(inv.args.path).replace(/^\/+|\/+$/g, '');
    if (!path) throw new LocalError('give the mount path to tune');
    const body: Record<string, unknown> = {};
    const options = kvPairs(o.options ?? [], '-options');
    if (o.version !== undefined) options.version = String(o.version);
    if (Object.keys(options).length) body.options = options;
    if (o.description !== undefined) body.description = o.description;
    if (o.defaultLeaseTtl !== undefined) body.default_lease_ttl = o.defaultLeaseTtl;
    if (o.maxLeaseTtl !== undefined) body.max_lease_ttl = o.maxLeaseTtl;
    if (o.allowedManagedKeys !== undefined) body.allowed_managed_keys = o.allowedManagedKeys;
    const res = await inv.client.write(`sys/mounts/${path}/tune`, body);
    for (const w of (res.body?.warnings as string[] | null | undefined) ?? []) inv.io.stderr.write(`WARNING! ${w}\n`);
    inv.success(`Success! Tuned the secrets engine at: ${path}/`);
  },
};
