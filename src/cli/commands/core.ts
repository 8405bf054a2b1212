/** Core commands: server, status, operator, generic read/write/list/delete, token, policy, secrets. */
import { Command, Option } from 'commander';
import { readFileSync } from 'node:fs';
import type { CliContext } from '../context.js';
import { LocalError } from '../client.js';
import { grid, success } from '../output.js';

/** Key shares from `-`/absent (stdin, or a hidden prompt on a TTY) or `@file`; a literal key is refused (ps, shell history). */
async function readShares(ctx: CliContext, arg: string | undefined, prompt: string): Promise<string[]> {
  let text: string;
  if (arg === undefined || arg === '-') text = await ctx.secret(prompt);
  else if (arg.startsWith('@')) text = await ctx.valueOf(arg);
  else throw new LocalError('give key shares on stdin or as @file, not on the command line (it would show in ps and the shell history)');
  return text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
}

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

  const operator = program.command('operator').description('Initialise, unseal, rekey and seal the daemon');
  const int = (name: string) => (v: string) => {
    if (!/^\d+$/.test(v)) throw new LocalError(`--${name} must be a whole number, got "${v}"`);
    return Number(v);
  };
  operator
    .command('init')
    .description('Initialise storage: unseal key shares (or recovery key shares under an auto seal) and the root token are printed once; the OS keychain keeps the master key')
    .option('--key-shares <n>', 'number of unseal key shares to split the master key into (Vault: -key-shares; default 1)', int('key-shares'))
    .option('--key-threshold <n>', 'shares needed to unseal (default 1; more than 1 when shares > 1)', int('key-threshold'))
    .option('--recovery-shares <n>', 'auto seal: number of recovery key shares (default 1)', int('recovery-shares'))
    .option('--recovery-threshold <n>', 'auto seal: recovery shares needed (default 1)', int('recovery-threshold'))
    .option('--status', 'only say whether the daemon is initialised (exit 0 yes, 2 no)')
    .option('--no-keychain', 'do not store the master key in the OS keychain')
    .addHelpText('after', '\nVault-style single-dash flags work too (-key-shares=5).\n\nExamples:\n  $ keyhold operator init\n  $ keyhold operator init -key-shares=5 -key-threshold=3 --format json > init.json')
    .action(async (opts, cmd: Command) => {
      const client = ctx.client(cmd);
      const g = ctx.globals(cmd);
      if (opts.status) {
        const st = await client.request('GET', 'sys/init');
        const inited = Boolean(st.body?.initialized);
        if (g.format === 'json' || g.field) await ctx.print(cmd, { initialized: inited });
        else process.stdout.write(inited ? 'keyhold is initialized\n' : 'keyhold is not initialized\n');
        if (!inited) process.exitCode = 2;
        return;
      }
      // One share needs no threshold flag (it can only be 1).
      if (opts.keyShares === 1) opts.keyThreshold ??= 1;
      if (opts.recoveryShares === 1) opts.recoveryThreshold ??= 1;
      const body: Record<string, unknown> = { keychain: opts.keychain };
      if (opts.keyShares !== undefined) body.secret_shares = opts.keyShares;
      if (opts.keyThreshold !== undefined) body.secret_threshold = opts.keyThreshold;
      if (opts.recoveryShares !== undefined) body.recovery_shares = opts.recoveryShares;
      if (opts.recoveryThreshold !== undefined) body.recovery_threshold = opts.recoveryThreshold;
      const res = await client.request('POST', 'sys/init', body);
      const b = (res.body ?? {}) as Record<string, unknown>;
      const keys = (b.keys_base64 as string[] | undefined) ?? [];
      const rkeys = (b.recovery_keys_base64 as string[] | undefined) ?? [];
      const shares = keys.length ? (opts.keyShares ?? keys.length) : 0;
      const threshold = keys.length ? (opts.keyThreshold ?? 1) : 0;
      const rshares = rkeys.length;
      const rthreshold = rkeys.length ? (opts.recoveryThreshold ?? 1) : 0;
      if (g.format === 'json' || g.format === 'yaml' || g.field) {
        // Vault's machine-readable init output [vault src command/operator_init.go], plus keyhold's fields.
        const out: Record<string, unknown> = {
          unseal_keys_b64: keys,
          unseal_keys_hex: (b.keys as string[] | undefined) ?? [],
          unseal_shares: shares,
          unseal_threshold: threshold,
          recovery_keys_b64: rkeys,
          recovery_keys_hex: (b.recovery_keys as string[] | undefined) ?? [],
          recovery_keys_shares: rshares,
          recovery_keys_threshold: rthreshold,
          root_token: b.root_token,
          keychain: b.keychain,
        };
        if (keys.length === 1) out.recovery_key = keys[0];
        await ctx.print(cmd, out);
        return;
      }
      let text = '';
      keys.forEach((k, i) => (text += `Unseal Key ${i + 1}: ${k}\n`));
      rkeys.forEach((k, i) => (text += `Recovery Key ${i + 1}: ${k}\n`));
      text += `\nInitial Root Token: ${b.root_token}\n\n`;
      if (keys.length) {
        text += `keyhold initialized with ${shares} key share${shares === 1 ? '' : 's'} and a key threshold of ${threshold}. Distribute the key shares printed above securely: they are shown only once.\n`;
        text += b.keychain
          ? 'The master key is stored in the OS keychain: the daemon unseals itself at start. The key shares are the recovery path if the keychain is lost.\n'
          : `No keychain stored the master key: after each start, unseal with ${threshold} of these keys (\`keyhold operator unseal\`).\n`;
        text += 'New key shares can be made from a quorum of these with `keyhold operator rekey`.\n';
      } else {
        text += 'Success! keyhold is initialized; the auto seal unseals it at each start.\n';
      }
      if (rkeys.length) text += `Recovery key initialized with ${rshares} key share${rshares === 1 ? '' : 's'} and a key threshold of ${rthreshold}. Distribute the shares printed above securely.\n`;
      process.stdout.write(text);
    });
  operator
    .command('unseal')
    .description('Give unseal key shares (recovery shares under an auto seal): one typed on a TTY, or one or more on stdin, one per line')
    .option('--reset', 'forget the shares given so far')
    .option('--migrate', 'the shares belong to the seal being migrated away from (seal migration)')
    .argument('[key]', '"-" (stdin, the default) or @file; never the key itself')
    .addHelpText('after', '\nExamples:\n  $ keyhold operator unseal                 # prompts for one share\n  $ keyhold operator unseal < shares.txt    # several shares, one per line\n  $ keyhold operator unseal @share.txt\n  $ keyhold operator unseal -migrate < recovery-shares.txt')
    .action(async (keyArg: string | undefined, opts, cmd: Command) => {
      const client = ctx.client(cmd);
      if (opts.reset) {
        const res = await client.request('POST', 'sys/unseal', { reset: true });
        await ctx.print(cmd, res.body);
        return;
      }
      const keys = await readShares(ctx, keyArg, 'Unseal Key (will be hidden): ');
      if (!keys.length) throw new LocalError('give an unseal key share on stdin (one per line)');
      let res: Awaited<ReturnType<typeof client.request>> | undefined;
      for (const key of keys) {
        res = await client.request('POST', 'sys/unseal', opts.migrate ? { key, migrate: true } : { key });
        if (res.body?.sealed === false) break;
      }
      await ctx.print(cmd, res!.body);
    });
  operator
    .command('rekey')
    .description('Make new unseal key shares (or recovery shares with --target recovery) from a quorum of the current ones')
    .option('--init', 'start a rekey (with --key-shares and --key-threshold)')
    .option('--cancel', 'cancel the rekey in progress')
    .option('--status', 'show the rekey in progress')
    .option('--key-shares <n>', 'number of new key shares (default 1)', int('key-shares'))
    .option('--key-threshold <n>', 'new shares needed (default 1)', int('key-threshold'))
    .option('--nonce <nonce>', 'nonce of the rekey in progress (read from the daemon when absent)')
    .addOption(new Option('--target <target>', 'which key: the unseal key (barrier) or the recovery key of an auto seal').choices(['barrier', 'recovery']).default('barrier'))
    .option('--verify', 'with --init: require the new shares to be given back before the rekey takes effect; alone: give back new shares')
    .addHelpText(
      'after',
      '\nVault-style single-dash flags work too (-init -key-shares=5).\n\nExamples:\n  $ keyhold operator rekey --init --key-shares 5 --key-threshold 3\n  $ keyhold operator rekey < old-shares.txt     # one current share per line; prints the new shares\n  $ keyhold operator rekey --cancel',
    )
    .argument('[key]', '"-" (stdin, the default) or @file; never the key itself')
    .action(async (keyArg: string | undefined, opts, cmd: Command) => {
      const client = ctx.client(cmd);
      const base = opts.target === 'recovery' ? 'sys/rekey-recovery-key' : 'sys/rekey';
      if (opts.cancel) {
        await client.request('DELETE', `${base}/init`);
        success('Success! Canceled rekeying (if it was started)');
        return;
      }
      if (opts.status) {
        const res = await client.request('GET', `${base}/init`);
        await ctx.print(cmd, res.body);
        return;
      }
      if (opts.init) {
        const res = await client.request('PUT', `${base}/init`, {
          secret_shares: opts.keyShares ?? 1,
          secret_threshold: opts.keyThreshold ?? 1,
          require_verification: Boolean(opts.verify),
        });
        await ctx.print(cmd, res.body);
        return;
      }
      const verify = Boolean(opts.verify);
      let nonce: string | undefined = opts.nonce;
      if (!nonce) {
        const st = await client.request('GET', verify ? `${base}/verify` : `${base}/init`);
        nonce = String(st.body?.nonce ?? '');
        if (!verify && !st.body?.started) throw new LocalError('no rekey is in progress: start one with `keyhold operator rekey --init`');
      }
      const keys = await readShares(ctx, keyArg, verify ? 'New key share (will be hidden): ' : 'Current unseal key share (will be hidden): ');
      if (!keys.length) throw new LocalError('give a key share on stdin (one per line)');
      let res: Awaited<ReturnType<typeof client.request>> | undefined;
      for (const key of keys) {
        res = await client.request('PUT', verify ? `${base}/verify` : `${base}/update`, { key, nonce });
        if (res.body?.complete) break;
      }
      const b = (res!.body ?? {}) as Record<string, unknown>;
      const g = ctx.globals(cmd);
      if (!b.complete || g.format === 'json' || g.format === 'yaml' || g.field) return ctx.print(cmd, b);
      if (verify) {
        process.stdout.write(`Success! Rekey verified (nonce ${b.nonce}): the new key shares are now in use.\n`);
        return;
      }
      let out = '';
      ((b.keys_base64 as string[]) ?? []).forEach((k, i) => (out += `Key ${i + 1}: ${k}\n`));
      out += `\nOperation nonce: ${b.nonce}\n\n`;
      if (b.verification_required) {
        out += `The new shares are not in use yet: give ${opts.keyThreshold ?? 'the threshold'} of them back with \`keyhold operator rekey --verify\` (verification nonce ${b.verification_nonce}).\n`;
      } else if (((b.keys_base64 as string[]) ?? []).length) {
        out += 'keyhold rekeyed: the key shares above replace the old ones, which no longer unseal. Distribute them securely: they are shown only once.\n';
      } else {
        out += 'keyhold rekeyed: a new master key is stored wrapped by the auto seal.\n';
      }
      process.stdout.write(out);
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
    .option('--role <name>', 'create against a token role (auth/token/create/<name>)')
    .option('--period <duration>', 'periodic token: each renewal resets the TTL to this')
    .option('--type <type>', 'token type: service (default) or batch (not stored; cannot be renewed or revoked)')
    .option('--no-default-policy', 'do not attach the default policy')
    .option('--renewable <bool>', 'whether it can be renewed')
    .addHelpText('after', '\nExamples:\n  $ keyhold token create --policy transit-user --ttl 1h\n  $ keyhold token create --policy ci --field token\n  $ keyhold token create -role=deployer -period=24h -orphan')
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
      if (o.period) body.period = o.period;
      if (o.type) body.type = o.type;
      const res = await ctx.client(cmd).write(o.role ? `auth/token/create/${encodeURIComponent(o.role)}` : 'auth/token/create', body);
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
    .description('Mount an engine: transit, kv-v2 (or kv with --version 2), kv-v1 or kv with --version 1 (unversioned)')
    .argument('<type>')
    .option('--path <path>', 'mount path (default: the type)')
    .option('--description <text>', 'description')
    .option('--version <n>', 'kv version: 2 (default) or 1')
    .addHelpText('after', '\nExamples:\n  $ keyhold secrets enable transit\n  $ keyhold secrets enable --path=payments transit\n  $ keyhold secrets enable --path=team kv-v2')
    .action(async (type: string, o, cmd: Command) => {
      const path = (o.path ?? type).replace(/^\/+|\/+$/g, '');
      const body: Record<string, unknown> = { type, description: o.description ?? '' };
      if (type === 'kv' || type === 'kv-v2') body.options = { version: o.version ?? '2' };
      if (type === 'kv-v1') body.options = { version: '1' };
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
