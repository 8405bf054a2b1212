/**
 * `keyhold managed-keys ...`: keys kept in a PKCS#11 token or AWS KMS (sys/managed-keys). The PIN
 * and AWS credentials are read only from stdin (`-`) or a file (`@file`), never taken from argv.
 */
import { Command, Option } from 'commander';
import type { CliContext } from '../context.js';
import { LocalError } from '../client.js';
import { grid } from '../output.js';

const TYPES = ['pkcs11', 'awskms'];
const enc = encodeURIComponent;

function typeArg(t: string): string {
  if (!TYPES.includes(t)) throw new LocalError(`unknown managed key type "${t}"; one of: ${TYPES.join(', ')}`);
  return t;
}

const collect = (v: string, prev: string[] = []) => [...prev, ...v.split(',').map((s) => s.trim()).filter(Boolean)];

/** Value flags: field -> flag (help). */
const VALUE_FLAGS: Array<{ field: string; flag: string; help: string; list?: boolean }> = [
  { field: 'library', flag: '--library <name>', help: 'pkcs11: name of a kms_library stanza of the server config' },
  { field: 'slot', flag: '--slot <id>', help: 'pkcs11: decimal slot id (or --token-label)' },
  { field: 'token_label', flag: '--token-label <label>', help: 'pkcs11: token label (or --slot)' },
  { field: 'key_label', flag: '--key-label <label>', help: 'pkcs11: CKA_LABEL of the key' },
  { field: 'key_id', flag: '--key-id <id>', help: 'pkcs11: CKA_ID of the key (0x-prefixed hex or text)' },
  { field: 'mechanism', flag: '--mechanism <mech>', help: 'pkcs11: 0x0001 RSA PKCS#1, 0x000D RSA PSS, 0x0009 RSA OAEP, 0x1041 ECDSA, 0x1087 AES-GCM' },
  { field: 'key_bits', flag: '--key-bits <bits>', help: 'RSA modulus bits when generating: 2048, 3072, 4096' },
  { field: 'curve', flag: '--curve <curve>', help: 'EC curve when generating: P256, P384, P521' },
  { field: 'max_parallel', flag: '--max-parallel <n>', help: 'pkcs11: operations of this key in flight at once (default 1)' },
  { field: 'rsa_oaep_hash', flag: '--rsa-oaep-hash <hash>', help: 'pkcs11: OAEP hash for RSA-OAEP keys (default sha256; SoftHSM2: sha1)' },
  { field: 'usages', flag: '--usages <list>', help: 'comma list: encrypt, decrypt, sign, verify, wrap, unwrap, mac, generate_random' },
  { field: 'kms_key', flag: '--kms-key <key>', help: 'awskms: key id, ARN or alias/...' },
  { field: 'key_type', flag: '--key-type <type>', help: 'awskms: RSA, ECDSA or AES' },
  { field: 'region', flag: '--region <region>', help: 'awskms: region (default us-east-1)' },
  { field: 'endpoint', flag: '--endpoint <url>', help: 'awskms: custom endpoint URL' },
  { field: 'allowed_ipv4_addresses', flag: '--allowed-ipv4-address <cidr>', help: 'awskms: CIDR the network guard lets through (repeatable)', list: true },
  { field: 'allowed_ports', flag: '--allowed-port <port>', help: 'awskms: port besides 80 and 443 (repeatable)', list: true },
];
const BOOL_FLAGS: Array<{ field: string; flag: string; help: string }> = [
  { field: 'allow_generate_key', flag: '--allow-generate-key', help: 'generate the key in the HSM/KMS when it is not found' },
  { field: 'allow_replace_key', flag: '--allow-replace-key', help: 'accepted for compatibility' },
  { field: 'allow_store_key', flag: '--allow-store-key', help: 'accepted for compatibility' },
  { field: 'any_mount', flag: '--any-mount', help: 'any mount may use the key (else list it in a mount\'s allowed_managed_keys)' },
  { field: 'force_rw_session', flag: '--force-rw-session', help: 'pkcs11: open read-write sessions' },
  { field: 'disable_strict_networking', flag: '--disable-strict-networking', help: 'awskms: turn the network guard off' },
];
const SECRET_FLAGS: Array<{ field: string; flag: string; help: string }> = [
  { field: 'pin', flag: '--pin <source>', help: 'pkcs11: user PIN from - (stdin) or @file' },
  { field: 'access_key', flag: '--access-key <source>', help: 'awskms: access key id from - (stdin) or @file' },
  { field: 'secret_key', flag: '--secret-key <source>', help: 'awskms: secret access key from - (stdin) or @file' },
];

const camel = (field: string) => field.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/** Register the managed-keys commands. */
export function register(program: Command, ctx: CliContext): void {
  const mk = program.command('managed-keys').description('Keys kept in an HSM (PKCS#11) or AWS KMS, usable by transit keys of type managed_key');

  const create = mk
    .command('create')
    .description('Create or update a managed key')
    .argument('<type>', 'pkcs11 or awskms')
    .argument('<name>', 'managed key name');
  for (const o of VALUE_FLAGS) {
    const opt = new Option(o.flag, o.help);
    if (o.list) opt.argParser(collect);
    create.addOption(opt);
  }
  for (const o of BOOL_FLAGS) create.addOption(new Option(o.flag, o.help));
  for (const o of SECRET_FLAGS) create.addOption(new Option(o.flag, o.help));
  create
    .addHelpText('after', '\nExamples:\n  $ echo 1234 | keyhold managed-keys create pkcs11 hsm-key --library softhsm --token-label T --key-label L --mechanism 0x0001 --key-bits 2048 --allow-generate-key --pin -\n  $ keyhold managed-keys create awskms kms-key --kms-key alias/signer --key-type RSA --key-bits 2048 --region eu-west-1')
    .action(async (type: string, name: string, opts: Record<string, unknown>, cmd: Command) => {
      typeArg(type);
      const body: Record<string, unknown> = {};
      for (const o of VALUE_FLAGS) {
        const v = opts[camel(o.field)];
        if (v !== undefined) body[o.field] = v;
      }
      for (const o of BOOL_FLAGS) if (opts[camel(o.field)]) body[o.field] = true;
      let stdinUsed = false;
      for (const o of SECRET_FLAGS) {
        const v = opts[camel(o.field)] as string | undefined;
        if (v === undefined) continue;
        if (v !== '-' && !v.startsWith('@')) throw new LocalError(`${o.flag.split(' ')[0]} takes - (stdin) or @file; a secret is never taken from the command line`);
        if (v === '-') {
          if (stdinUsed) throw new LocalError('only one secret can come from stdin; give the others as @file');
          stdinUsed = true;
          body[o.field] = await ctx.secret(`${o.field.replace('_', ' ')}: `);
        } else body[o.field] = (await ctx.valueOf(v)).replace(/\r?\n$/, '');
        if (body[o.field] === '') throw new LocalError(`${o.flag.split(' ')[0]}: empty value`);
      }
      await ctx.client(cmd).write(`sys/managed-keys/${enc(type)}/${enc(name)}`, body);
      process.stderr.write(`Success! Managed key ${name} (${type}) written.\n`);
    });

  mk.command('list')
    .description('List the managed keys of one type')
    .argument('<type>', 'pkcs11 or awskms')
    .action(async (type: string, _o, cmd: Command) => {
      const res = await ctx.client(cmd).request('LIST', `sys/managed-keys/${enc(typeArg(type))}`, undefined, { allowStatus: [404] });
      const keys = ((res.body?.data as { keys?: string[] } | undefined)?.keys ?? []) as string[];
      const g = ctx.globals(cmd);
      if (g.field || (g.format && g.format !== 'table')) return ctx.print(cmd, { keys });
      if (!keys.length) {
        process.stderr.write(`No ${type} managed keys.\n`);
        return;
      }
      process.stdout.write(grid(['Keys'], keys.map((k) => [k])));
    });

  mk.command('read')
    .description('Read a managed key (the PIN and AWS secrets show as "redacted")')
    .argument('<type>', 'pkcs11 or awskms')
    .argument('<name>', 'managed key name')
    .action(async (type: string, name: string, _o, cmd: Command) => {
      const res = await ctx.client(cmd).read(`sys/managed-keys/${enc(typeArg(type))}/${enc(name)}`);
      await ctx.print(cmd, res.body?.data ?? {});
    });

  mk.command('delete')
    .description('Delete a managed key (refused while a mount lists it or a transit key uses it)')
    .argument('<type>', 'pkcs11 or awskms')
    .argument('<name>', 'managed key name')
    .action(async (type: string, name: string, _o, cmd: Command) => {
      await ctx.client(cmd).delete(`sys/managed-keys/${enc(typeArg(type))}/${enc(name)}`);
      process.stderr.write(`Success! Managed key ${name} (${type}) deleted.\n`);
    });

  mk.command('test-sign')
    .description('Sign random data with the key and verify the signature (generates the key when allowed and missing)')
    .argument('<type>', 'pkcs11 or awskms')
    .argument('<name>', 'managed key name')
    .option('--use-pss', 'RSA: PSS instead of PKCS#1 v1.5')
    .option('--hash-algorithm <hash>', 'sha2-256 (default), sha2-384, sha2-512, ...')
    .action(async (type: string, name: string, opts: { usePss?: boolean; hashAlgorithm?: string }, cmd: Command) => {
      const body: Record<string, unknown> = {};
      if (opts.usePss) body.use_pss = true;
      if (opts.hashAlgorithm) body.hash_algorithm = opts.hashAlgorithm;
      await ctx.client(cmd).write(`sys/managed-keys/${enc(typeArg(type))}/${enc(name)}/test/sign`, body);
      process.stderr.write(`Success! Managed key ${name} signed and verified.\n`);
    });
}
