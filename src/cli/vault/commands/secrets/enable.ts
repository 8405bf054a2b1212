/**
 * `vault secrets enable TYPE`: as the vault CLI, `kv` is KV version 1 (the server's default for a type
 * without a version); `kv-v2`, `-version=2` or `-options=version=2` give version 2. Path: -path, else the type.
 */
import { collect, flag, type CommandSpec } from '../../../command.js';
import { LocalError } from '../../../errors.js';
import { kvPairs } from '../../pairs.js';

export const enable: CommandSpec = {
  words: ['secrets', 'enable'],
  summary: 'Enable a secrets engine (kv is KV version 1, as in the vault CLI; kv-v2 or -version=2 for version 2)',
  args: [{ name: 'type' }],
  flags: [
    flag('--path <path>', 'mount path (default: the type)'),
    flag('--description <text>', 'description', { default: '' }),
    flag('--version <n>', 'engine version (kv: 1 or 2)'),
    flag('--options <k=v>', 'engine option (repeatable)', { parse: collect }),
    flag('--default-lease-ttl <duration>', 'default lease TTL'),
    flag('--max-lease-ttl <duration>', 'maximum lease TTL'),
    flag('--local', 'mount local to this cluster (accepted)'),
    flag('--seal-wrap', 'seal wrapping (accepted)'),
    flag('--force-no-cache', 'no caching (accepted)'),
    flag('--external-entropy-access', 'external entropy (accepted)'),
    flag('--listing-visibility <v>', 'listing visibility in the UI (accepted)'),
    flag('--audit-non-hmac-request-keys <key>', 'accepted', { parse: collect }),
    flag('--audit-non-hmac-response-keys <key>', 'accepted', { parse: collect }),
    flag('--passthrough-request-headers <h>', 'accepted', { parse: collect }),
    flag('--allowed-response-headers <h>', 'accepted', { parse: collect }),
    flag('--allowed-managed-keys <name>', 'managed keys this mount may use (repeatable)', { parse: collect }),
    flag('--plugin-name <name>', 'accepted', { hidden: true }),
    flag('--plugin-version <v>', 'accepted', { hidden: true }),
  ],
  examples: [
    'vault secrets enable transit',
    'vault secrets enable -path=secret kv-v2',
    'vault secrets enable -version=2 kv',
  ],
  async run(inv) {
    const type = String(inv.args.type).trim();
    const o = inv.opts;
    const path = String(o.path ?? type).replace(/^\/+|\/+$/g, '');
    if (!path) throw new LocalError('-path must not be empty');
    const options = kvPairs(o.options ?? [], '-options');
    if (o.version !== undefined) {
      if (!/^\d+$/.test(String(o.version)))
        throw new LocalError(`-version: expected a whole number, got "${o.version}"`);
      options.version = String(o.version);
    }
    const body: Record<string, unknown> = {
      type,
      description: o.description,
      local: Boolean(o.local),
      seal_wrap: Boolean(o.sealWrap),
    };
    if (Object.keys(options).length) body.options = options;
    const config: Record<string, unknown> = {};
    if (o.defaultLeaseTtl) config.default_lease_ttl = o.defaultLeaseTtl;
    if (o.maxLeaseTtl) config.max_lease_ttl = o.maxLeaseTtl;
    if (o.allowedManagedKeys) config.allowed_managed_keys = o.allowedManagedKeys;
    if (Object.keys(config).length) body.config = config;
    await inv.client.write(`sys/mounts/${path}`, body);
    inv.success(`Success! Enabled the ${type} secrets engine at: ${path}/`);
  },
};
