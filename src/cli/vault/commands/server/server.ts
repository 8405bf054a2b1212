/**
 * `vault server`: keyhold's daemon with the vault CLI's dev flags. `-dev` listens on TCP at
 * `-dev-listen-address` (env VAULT_DEV_LISTEN_ADDRESS, default 127.0.0.1:8200) besides the socket,
 * with the root token `-dev-root-token-id` (env VAULT_DEV_ROOT_TOKEN_ID), and mounts only `secret/`
 * (KV v2) as vault's dev server does (keyhold's own `--dev` mounts `transit/` too).
 */
import { flag, type CommandSpec } from '../../../command.js';
import { server as keyholdServer } from '../../../commands/server/server.js';
import { withOpts } from '../../with-opts.js';

/** The vault CLI's dev listener when neither flag nor environment names one. */
export const DEV_LISTEN_ADDRESS = '127.0.0.1:8200';

export const server: CommandSpec = {
  ...keyholdServer,
  flags: [
    ...(keyholdServer.flags ?? []),
    flag('--dev-root-token-id <id>', 'dev mode: the root token (env VAULT_DEV_ROOT_TOKEN_ID)'),
    flag(
      '--dev-listen-address <host:port>',
      `dev mode: TCP address to listen on (env VAULT_DEV_LISTEN_ADDRESS, default ${DEV_LISTEN_ADDRESS})`,
    ),
  ],
  examples: ['vault server -dev', 'vault server -dev -dev-root-token-id=root -dev-listen-address=127.0.0.1:8200'],
  run(inv) {
    const o = { ...inv.opts };
    const env = process.env;
    if (o.dev) {
      o.devRootToken ??= o.devRootTokenId ?? (env.VAULT_DEV_ROOT_TOKEN_ID || undefined);
      const addr = o.devListenAddress ?? (env.VAULT_DEV_LISTEN_ADDRESS || DEV_LISTEN_ADDRESS);
      o.listen = [...((o.listen as string[] | undefined) ?? []), addr];
      // Only secret/ (KV v2), as vault's dev server: `vault secrets enable transit` must succeed after it.
      o.devMounts = 'vault';
      // As vault's dev banner: the variables a shell needs for this server.
      inv.io.stdout.write(
        `WARNING! dev mode is enabled: storage is in memory and the server is unsealed.\n\n    $ export VAULT_ADDR='http://${addr}'\n\n`,
      );
    }
    return keyholdServer.run(withOpts(inv, o));
  },
};
