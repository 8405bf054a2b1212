/** `keyhold server`: run the daemon. */
import { flag, type CommandSpec } from '../../command.js';

export const server: CommandSpec = {
  words: ['server'],
  summary: 'Run the keyhold daemon',
  flags: [
    flag('--dev', 'dev mode: in-memory storage, unsealed, root token printed, transit/ and secret/ mounted'),
    flag('--dev-root-token <token>', 'root token id to use in dev mode'),
    flag(
      '--config <file>',
      'config file: Vault HCL or JSON (storage, listener, api_addr, seal, ...); see docs/server-config.md',
    ),
    flag('--socket <path>', 'Unix socket path (default: per-user runtime dir)'),
    flag('--no-socket', 'do not listen on a Unix socket'),
    flag('--listen <host:port>', 'also listen on TCP (repeatable)', {
      parse: (v: string, prev: string[] = []) => [...prev, v],
    }),
    flag('--tls-cert <file>', 'TLS certificate (PEM) for TCP listeners'),
    flag('--tls-key <file>', 'TLS private key (PEM) for TCP listeners'),
    flag('--storage-path <dir>', 'file storage directory'),
    flag('--max-request-size <bytes>', 'request size limit (default 33554432)', { parse: (v) => Number(v) }),
    flag('--log-level <level>', 'log level', { choices: ['debug', 'info', 'warn', 'error', 'off'] }),
    flag('--keychain <kind>', 'where the master key is kept', { choices: ['os', 'none'] }),
  ],
  examples: ['keyhold server --dev', 'keyhold server --storage-path /var/lib/keyhold --listen 127.0.0.1:8200'],
  async run({ opts }) {
    const { runServer } = await import('../../../server/daemon.js');
    await runServer({
      config: opts.config,
      dev: opts.dev,
      devRootToken: opts.devRootToken,
      devMounts: opts.devMounts,
      socket: opts.socket === false ? undefined : opts.socket,
      noSocket: opts.socket === false,
      listen: opts.listen,
      tlsCert: opts.tlsCert,
      tlsKey: opts.tlsKey,
      storagePath: opts.storagePath,
      maxRequestSize: opts.maxRequestSize,
      logLevel: opts.logLevel,
      keychain: opts.keychain,
    });
  },
};
