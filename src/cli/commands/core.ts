/** Core commands: server, status, login, operator, generic read/write/list/delete, token, policy, secrets. */
import { Command, Option } from 'commander';
import { mkdirSync, writeFileSync, chmodSync, readFileSync, renameSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CliContext } from '../context.js';
import { LocalError } from '../client.js';
import { tokenFile } from '../../framework/paths.js';
import { grid, success } from '../output.js';

/** Register the core commands on `program`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('server')
    .description('Run the keyhold daemon')
    .option('--dev', 'dev mode: in-memory storage, unsealed, root token printed, transit/ and secret/ mounted')
    .option('--dev-root-token <token>', 'root token id to use in dev mode')
    .option('--config <file>', 'config file: Vault HCL or JSON (storage, listener, api_addr, seal, ...); see docs/server-config.md')
    .option('--socket <path>', 'Unix socket path (default: per-user runtime dir)')
    .option('--no-socket', 'do not listen on a Unix socket')
    .option('--listen <host:port>', 'also listen on TCP (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--tls-cert <file>', 'TLS certificate (PEM) for TCP listeners')
    .option('--tls-key <file>', 'TLS private key (PEM) for TCP listeners')
    .option('--storage-path <dir>', 'file storage directory')
    .option('--max-request-size <bytes>', 'request size limit (default 33554432)', (v) => Number(v))
    .addOption(new Option('--log-level <level>', 'log level').choices(['debug', 'info', 'warn', 'error', 'off']))
    .addOption(new Option('--keychain <kind>', 'where the master key is kept').choices(['os', 'none']))
    .addHelpText('after', '\nExamples:\n  $ keyhold server --dev\n  $ keyhold server --storage-path /var/lib/keyhold --listen 127.0.0.1:8200')
    .action(async (opts) => {
      const { runServer } = await import('../../server/daemon.js');
      await runServer({
        config: opts.config,
        dev: opts.dev,
        devRootToken: opts.devRootToken,
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
    });

  program
    .command('status')
    .description('Seal status, version and storage of the daemon')
    .action(async (_o, cmd: Command) => {
      const client = ctx.client(cmd);
      const res = await client.request('GET', 'sys/seal-status');
      const body = { ...(res.body ?? {}) } as Record<string, unknown>;
      // HA fields as `vault status` shows them (from sys/leader; a sealed node answers 503 there).
      if (!body.sealed) {
        const leader = (await client.request('GET', 'sys/leader').catch(() => null))?.body as Record<string, unknown> | undefined;
        body.ha_enabled = leader?.ha_enabled === true;
        if (leader?.ha_enabled) {
          body.ha_cluster = leader.leader_cluster_address || 'n/a';
          body.ha_mode = leader.is_self ? 'active' : 'standby';
          if (leader.is_self) body.active_since = leader.active_time;
          body.active_node_address = leader.leader_address || '<none>';
        }
      }
      await ctx.print(cmd, body);
      if (res.body?.sealed) process.exitCode = 2;
    });

  program
    .command('login')
    .description('Save a token for later commands (read from stdin, or the argument)')
    .argument('[token]', 'token; prefer stdin so it stays out of shell history')
    .action(async (tokenArg: string | undefined, _o, cmd: Command) => {
      const token = tokenArg && tokenArg !== '-' ? tokenArg : await ctx.secret('Token (will be hidden): ');
      if (!token) throw new LocalError('no token given on stdin');
      const client = ctx.client(cmd);
      client.token = token;
      const res = await client.request('GET', 'auth/token/lookup-self');
      const file = tokenFile();
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      // Write to a private temp file and rename, so the token is never readable by others even briefly.
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, token + '\n', { mode: 0o600 });
      chmodSync(tmp, 0o600);
      renameSync(tmp, file);
      const d = (res.body?.data ?? {}) as Record<string, unknown>;
      success(`Success! Token saved to ${file} (policies: ${(d.policies as string[] | undefined)?.join(', ') ?? ''})`);
    });

  const operator = program.command('operator').description('Initialise, unseal and seal the daemon');
  operator
    .command('init')
    .description('Initialise storage; the master key goes to the OS keychain, the recovery key and root token are printed once')
    .option('--no-keychain', 'do not store the master key in the OS keychain')
    .action(async (opts, cmd: Command) => {
      const res = await ctx.client(cmd).request('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1, keychain: opts.keychain });
      const b = res.body ?? {};
      const g = ctx.globals(cmd);
      if (g.format === 'json' || g.field) {
        await ctx.print(cmd, { recovery_key: (b.keys as string[])[0], root_token: b.root_token, keychain: b.keychain });
        return;
      }
      process.stdout.write(
        `Recovery Key: ${(b.keys as string[])[0]}\nInitial Root Token: ${b.root_token}\n\n` +
          (b.keychain
            ? 'The master key is stored in the OS keychain: the daemon unseals itself at start.\n'
            : 'No keychain stored the master key: unseal after each start with `keyhold operator unseal`.\n') +
          'Keep the recovery key safe: it is shown only once and unseals the data if the keychain is lost.\n',
      );
    });
  operator
    .command('unseal')
    .description('Unseal with the recovery key read from stdin')
    .action(async (_o, cmd: Command) => {
      const key = await ctx.secret('Recovery key (will be hidden): ');
      if (!key) throw new LocalError('give the recovery key on stdin');
      const res = await ctx.client(cmd).request('POST', 'sys/unseal', { key });
      await ctx.print(cmd, res.body);
    });
  operator
    .command('step-down')
    .description('Make the active cluster node give up the lock (sudo); another node takes over')
    .action(async (_o, cmd: Command) => {
      await ctx.client(cmd).request('POST', 'sys/step-down', {});
      success('Success! Stepped down: the active node gave up the lock.');
    });
  operator
    .command('migrate')
    .description('Copy every record from storage_source to storage_destination (no server may run on the source)')
    .requiredOption('--config <file>', 'migration config (HCL): storage_source "<type>" { ... } and storage_destination "<type>" { ... }')
    .option('--start <prefix>', 'copy only keys sorting at or after this one (resume a halted run)')
    .option('--reset', 'remove a stale migration lock from the source and exit')
    .option('--max-parallel <n>', 'records copied at once (default 10)', (v) => Number(v))
    .addHelpText('after', '\nExamples:\n  $ keyhold operator migrate -config migrate.hcl\n  $ keyhold operator migrate -config migrate.hcl -reset')
    .action(async (opts: { config: string; start?: string; reset?: boolean; maxParallel?: number }) => {
      const { loadMigrationConfig, migrate, MigrationError } = await import('../../server/migrate.js');
      if (opts.maxParallel !== undefined && !(Number.isInteger(opts.maxParallel) && opts.maxParallel >= 1)) throw new LocalError('-max-parallel must be a positive integer');
      let cfg;
      try {
        cfg = loadMigrationConfig(opts.config);
      } catch (e) {
        throw new LocalError((e as Error).message);
      }
      try {
        const n = await migrate(cfg, { start: opts.start, reset: opts.reset, maxParallel: opts.maxParallel, log: (l) => process.stderr.write(l + '\n') });
        if (opts.reset) success('Success! Migration lock reset (if it was set).');
        else success(`Success! All of the keys have been migrated (${n} records).`);
      } catch (e) {
        if (!(e instanceof MigrationError) && !(e as Error)?.message?.startsWith('storage unavailable')) throw e;
        // Vault's exit code for a failed migration is 2.
        process.stderr.write(`Error migrating: ${(e as Error).message}\n`);
        process.exitCode = 2;
      }
    });
  operator
    .command('seal')
    .description('Seal the daemon (forget keys until unsealed)')
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (_o, cmd: Command) => {
      await ctx.client(cmd).request('POST', 'sys/seal', {});
      success('Success! keyhold is sealed.');
    });

  program
    .command('read')
    .description('Read any path (GET)')
    .argument('<path>')
    .argument('[pairs...]', 'query parameters k=v')
    .action(async (path: string, pairs: string[], _o, cmd: Command) => {
      const q = await ctx.parsePairs(pairs);
      const res = await ctx.client(cmd).read(path, q as Record<string, string>);
      await ctx.print(cmd, res.body?.data ?? res.body);
    });
  program
    .command('write')
    .description('Write to any path (POST); values as k=v, k=@file, k=- (stdin)')
    .argument('<path>')
    .argument('[pairs...]', 'k=v pairs')
    .option('-f, --force', 'write with no data')
    .action(async (path: string, pairs: string[], _o, cmd: Command) => {
      const body = await ctx.parsePairs(pairs);
      const res = await ctx.client(cmd).write(path, body);
      const data = res.body?.data ?? res.body?.auth;
      if (data) await ctx.print(cmd, data);
      else success(`Success! Data written to: ${path}`);
    });
  program
    .command('list')
    .description('List keys at any path (LIST)')
    .argument('<path>')
    .action(async (path: string, _o, cmd: Command) => {
      const res = await ctx.client(cmd).list(path);
      const keys = ((res.body?.data as Record<string, unknown>)?.keys ?? []) as string[];
      const g = ctx.globals(cmd);
      // Like `vault list`: a "Keys" column in table format; the bare array otherwise.
      if (!g.field && (!g.format || g.format === 'table')) process.stdout.write(grid(['Keys'], keys.map((k) => [k])));
      else await ctx.print(cmd, keys);
    });
  program
    .command('delete')
    .description('Delete any path (DELETE)')
    .argument('<path>')
    .argument('[pairs...]', 'query parameters k=v')
    .action(async (path: string, pairs: string[], _o, cmd: Command) => {
      const q = await ctx.parsePairs(pairs);
      await ctx.client(cmd).delete(path, q as Record<string, string>);
      success(`Success! Data deleted (if it existed) at: ${path}`);
    });

  const token = program.command('token').description('Create, look up and revoke tokens');
  token
    .command('create')
    .description('Create a token')
    .option('--policy <name>', 'policy (repeatable)', (v: string, p: string[] = []) => [...p, v])
    .option('--policies <list>', 'comma-separated policies')
    .option('--ttl <duration>', 'time to live, e.g. 1h')
    .option('--explicit-max-ttl <duration>', 'hard lifetime limit')
    .option('--num-uses <n>', 'number of uses (0 = unlimited)')
    .option('--display-name <name>', 'display name')
    .option('--orphan', 'create an orphan token')
    .option('--no-default-policy', 'do not attach the default policy')
    .option('--renewable <bool>', 'whether it can be renewed')
    .addHelpText('after', '\nExamples:\n  $ keyhold token create --policy transit-user --ttl 1h\n  $ keyhold token create --policy ci --field token')
    .action(async (o, cmd: Command) => {
      const policies = [...(o.policy ?? []), ...(o.policies ? String(o.policies).split(',') : [])];
      const body: Record<string, unknown> = {};
      if (policies.length) body.policies = policies;
      if (o.ttl) body.ttl = o.ttl;
      if (o.explicitMaxTtl) body.explicit_max_ttl = o.explicitMaxTtl;
      if (o.numUses) body.num_uses = o.numUses;
      if (o.displayName) body.display_name = o.displayName;
      if (o.orphan) body.no_parent = true;
      if (o.defaultPolicy === false) body.no_default_policy = true;
      if (o.renewable !== undefined) body.renewable = o.renewable;
      const res = await ctx.client(cmd).write('auth/token/create', body);
      const a = (res.body?.auth ?? {}) as Record<string, unknown>;
      await ctx.print(cmd, {
        token: a.client_token,
        token_accessor: a.accessor,
        token_duration: a.lease_duration,
        token_renewable: a.renewable,
        token_policies: a.policies,
      });
    });
  token
    .command('lookup')
    .description('Look up the current token, or one given with --accessor or on stdin (-)')
    .argument('[token]', '"-" reads a token from stdin')
    .option('--accessor <accessor>', 'look up by accessor')
    .action(async (t: string | undefined, o, cmd: Command) => {
      const client = ctx.client(cmd);
      let res;
      if (o.accessor) res = await client.write('auth/token/lookup-accessor', { accessor: o.accessor });
      else if (t) res = await client.write('auth/token/lookup', { token: t === '-' ? (await ctx.stdin()).toString().trim() : t });
      else res = await client.read('auth/token/lookup-self');
      await ctx.print(cmd, res.body?.data);
    });
  token
    .command('revoke')
    .description('Revoke a token (stdin with "-"), by --accessor, or the current one with --self')
    .argument('[token]')
    .option('--accessor <accessor>', 'revoke by accessor')
    .option('--self', 'revoke the calling token')
    .action(async (t: string | undefined, o, cmd: Command) => {
      const client = ctx.client(cmd);
      if (o.self) await client.write('auth/token/revoke-self', {});
      else if (o.accessor) await client.write('auth/token/revoke-accessor', { accessor: o.accessor });
      else if (t) await client.write('auth/token/revoke', { token: t === '-' ? (await ctx.stdin()).toString().trim() : t });
      else throw new LocalError('give a token ("-" for stdin), --accessor or --self');
      success('Success! Revoked token (if it existed)');
    });

  const policy = program.command('policy').description('Manage ACL policies (HCL or JSON)');
  policy
    .command('write')
    .description('Create or replace a policy from a file or stdin (-)')
    .argument('<name>')
    .argument('<file>', 'policy file, or - for stdin')
    .addHelpText('after', '\nExamples:\n  $ keyhold policy write transit-user policy.hcl\n  $ echo \'path "transit/encrypt/app" { capabilities = ["update"] }\' | keyhold policy write app -')
    .action(async (name: string, file: string, _o, cmd: Command) => {
      const text = file === '-' ? (await ctx.stdin()).toString('utf8') : readFile(file);
      await ctx.client(cmd).write(`sys/policies/acl/${encodeURIComponent(name)}`, { policy: text });
      success(`Success! Uploaded policy: ${name}`);
    });
  policy
    .command('read')
    .argument('<name>')
    .description('Print a policy')
    .action(async (name: string, _o, cmd: Command) => {
      const res = await ctx.client(cmd).read(`sys/policies/acl/${encodeURIComponent(name)}`);
      const g = ctx.globals(cmd);
      if (!g.format || g.format === 'table') process.stdout.write(String((res.body?.data as Record<string, unknown>).policy) + '\n');
      else await ctx.print(cmd, res.body?.data);
    });
  policy
    .command('list')
    .description('List policies')
    .action(async (_o, cmd: Command) => {
      const res = await ctx.client(cmd).list('sys/policies/acl');
      await ctx.print(cmd, (res.body?.data as Record<string, unknown>).keys);
    });
  policy
    .command('delete')
    .argument('<name>')
    .description('Delete a policy')
    .action(async (name: string, _o, cmd: Command) => {
      await ctx.client(cmd).delete(`sys/policies/acl/${encodeURIComponent(name)}`);
      success(`Success! Deleted policy: ${name}`);
    });

  const secrets = program.command('secrets').description('Mount, list and unmount secrets engines');
  secrets
    .command('enable')
    .description('Mount an engine: transit, kv-v2 (or kv with --version 2)')
    .argument('<type>')
    .option('--path <path>', 'mount path (default: the type)')
    .option('--description <text>', 'description')
    .option('--version <n>', 'kv version (only 2)')
    .addHelpText('after', '\nExamples:\n  $ keyhold secrets enable transit\n  $ keyhold secrets enable --path=payments transit\n  $ keyhold secrets enable --path=team kv-v2')
    .action(async (type: string, o, cmd: Command) => {
      const path = (o.path ?? type).replace(/^\/+|\/+$/g, '');
      const body: Record<string, unknown> = { type, description: o.description ?? '' };
      if (type === 'kv' || type === 'kv-v2') body.options = { version: o.version ?? '2' };
      await ctx.client(cmd).write(`sys/mounts/${path}`, body);
      success(`Success! Enabled the ${type} secrets engine at: ${path}/`);
    });
  secrets
    .command('disable')
    .description('Unmount an engine and delete its data')
    .argument('<path>')
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (path: string, _o, cmd: Command) => {
      await ctx.client(cmd).delete(`sys/mounts/${path.replace(/^\/+|\/+$/g, '')}`);
      success(`Success! Disabled the secrets engine (if it existed) at: ${path}`);
    });
  secrets
    .command('list')
    .description('List mounted engines')
    .action(async (_o, cmd: Command) => {
      const res = await ctx.client(cmd).read('sys/mounts');
      const data = (res.body?.data ?? {}) as Record<string, Record<string, unknown>>;
      const g = ctx.globals(cmd);
      if (g.format && g.format !== 'table') return ctx.print(cmd, data);
      const rows = Object.entries(data)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([p, m]) => [p, String(m.type), String(m.accessor), String(m.description ?? '')]);
      process.stdout.write(grid(['Path', 'Type', 'Accessor', 'Description'], rows));
    });
}

function readFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new LocalError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}
