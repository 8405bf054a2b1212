/**
 * `keyhold managed-keys create TYPE NAME`: a key kept in a PKCS#11 token or AWS KMS. The flags come
 * from the route's fields; the PIN and AWS credentials only from stdin (`-`) or a file (`@file`).
 */
import type { CommandSpec, FlagSpec, Invocation } from '../../command.js';
import { LocalError } from '../../errors.js';
import { bodyOf, fieldFlag, routeAt } from '../../route-flags.js';
import { managedKeyRoutes } from '../../../engines/sys/managed-key-routes.js';
import { NAME_ARG, TYPE_ARG, enc, typeArg } from './type.js';

const WRITE = routeAt(managedKeyRoutes, 'managed-keys/:type/:name');
const commaList = (v: string, prev: string[] = []) => [
  ...prev,
  ...v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

/** Value flags: field and the name of its value. */
const VALUES: Array<[string, string]> = [
  ['library', 'name'],
  ['slot', 'id'],
  ['token_label', 'label'],
  ['key_label', 'label'],
  ['key_id', 'id'],
  ['mechanism', 'mech'],
  ['key_bits', 'bits'],
  ['curve', 'curve'],
  ['max_parallel', 'n'],
  ['rsa_oaep_hash', 'hash'],
  ['usages', 'list'],
  ['kms_key', 'key'],
  ['key_type', 'type'],
  ['region', 'region'],
  ['endpoint', 'url'],
];
const values = VALUES.map(([f, value]) => fieldFlag(WRITE, f, { value }));
/** Repeatable flags named in the singular. */
const LISTS: FlagSpec[] = [
  {
    flags: '--allowed-ipv4-address <cidr>',
    help: 'awskms: CIDR the network guard lets through (repeatable)',
    parse: commaList,
    field: 'allowed_ipv4_addresses',
  },
  {
    flags: '--allowed-port <port>',
    help: 'awskms: port besides 80 and 443 (repeatable)',
    parse: commaList,
    field: 'allowed_ports',
  },
];
const switches = [
  'allow_generate_key',
  'allow_replace_key',
  'allow_store_key',
  'any_mount',
  'force_rw_session',
  'disable_strict_networking',
].map((f) => fieldFlag(WRITE, f, { switch: true }));
/** Secret flags: never a value in argv. */
const SECRETS: Array<{ field: string; flag: string; help: string }> = [
  { field: 'pin', flag: '--pin <source>', help: 'pkcs11: user PIN from - (stdin) or @file' },
  { field: 'access_key', flag: '--access-key <source>', help: 'awskms: access key id from - (stdin) or @file' },
  { field: 'secret_key', flag: '--secret-key <source>', help: 'awskms: secret access key from - (stdin) or @file' },
];

/** The secret fields given: one may come from stdin, the others from files. */
async function secretsOf(inv: Invocation): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  let stdinUsed = false;
  for (const o of SECRETS) {
    const v = inv.opts[o.field.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase())] as string | undefined;
    if (v === undefined) continue;
    const name = o.flag.split(' ')[0];
    if (v !== '-' && !v.startsWith('@'))
      throw new LocalError(`${name} takes - (stdin) or @file; a secret is never taken from the command line`);
    if (v === '-') {
      if (stdinUsed) throw new LocalError('only one secret can come from stdin; give the others as @file');
      stdinUsed = true;
      body[o.field] = await inv.secret(`${o.field.replace('_', ' ')}: `);
    } else body[o.field] = (await inv.valueOf(v)).replace(/\r?\n$/, '');
    if (body[o.field] === '') throw new LocalError(`${name}: empty value`);
  }
  return body;
}

export const create: CommandSpec = {
  words: ['managed-keys', 'create'],
  summary: 'Create or update a managed key',
  args: [TYPE_ARG, NAME_ARG],
  flags: [...values, ...LISTS, ...switches, ...SECRETS.map((s) => ({ flags: s.flag, help: s.help }))],
  stdin: 'one secret given as -',
  examples: [
    'echo 1234 | keyhold managed-keys create pkcs11 hsm-key --library softhsm --token-label T --key-label L --mechanism 0x0001 --key-bits 2048 --allow-generate-key --pin -',
    'keyhold managed-keys create awskms kms-key --kms-key alias/signer --key-type RSA --key-bits 2048 --region eu-west-1',
  ],
  async run(inv) {
    const { type, name } = inv.args as { type: string; name: string };
    typeArg(type);
    const body = { ...bodyOf([...values, ...LISTS, ...switches], inv.opts), ...(await secretsOf(inv)) };
    await inv.client.write(`sys/managed-keys/${enc(type)}/${enc(name)}`, body);
    inv.success(`Success! Managed key ${name} (${type}) written.`);
  },
};
