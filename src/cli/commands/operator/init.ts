/**
 * `keyhold operator init`: initialise storage; the unseal key shares (or recovery shares under an auto
 * seal) and the root token are printed once. `--status` only asks (exit 0 yes, 2 no).
 */
import { flag, type CommandSpec, type Invocation } from '../../command.js';
import { pgpKeyFile, pgpKeyFiles } from '../../pgp-key-file.js';
import { int, machineReadable } from './shares.js';

/** The text shown on a terminal after init. */
function initText(
  b: Record<string, unknown>,
  n: { shares: number; threshold: number; rshares: number; rthreshold: number },
): string {
  const keys = (b.keys_base64 as string[] | undefined) ?? [];
  const rkeys = (b.recovery_keys_base64 as string[] | undefined) ?? [];
  let text = '';
  keys.forEach((k, i) => (text += `Unseal Key ${i + 1}: ${k}\n`));
  rkeys.forEach((k, i) => (text += `Recovery Key ${i + 1}: ${k}\n`));
  text += `\nInitial Root Token: ${b.root_token}\n\n`;
  if (keys.length) {
    text += `keyhold initialized with ${n.shares} key share${n.shares === 1 ? '' : 's'} and a key threshold of ${n.threshold}. Distribute the key shares printed above securely: they are shown only once.\n`;
    text += b.keychain
      ? 'The master key is stored in the OS keychain: the daemon unseals itself at start. The key shares are the recovery path if the keychain is lost.\n'
      : `No keychain stored the master key: after each start, unseal with ${n.threshold} of these keys (\`keyhold operator unseal\`).\n`;
    text += 'New key shares can be made from a quorum of these with `keyhold operator rekey`.\n';
  } else {
    text += 'Success! keyhold is initialized; the auto seal unseals it at each start.\n';
  }
  if (rkeys.length)
    text += `Recovery key initialized with ${n.rshares} key share${n.rshares === 1 ? '' : 's'} and a key threshold of ${n.rthreshold}. Distribute the shares printed above securely.\n`;
  return text;
}

export async function initStatus(inv: Invocation): Promise<number> {
  const st = await inv.client.request('GET', 'sys/init');
  const inited = Boolean(st.body?.initialized);
  if (inv.globals.format === 'json' || inv.globals.field) await inv.print({ initialized: inited });
  else inv.io.stdout.write(inited ? 'keyhold is initialized\n' : 'keyhold is not initialized\n');
  return inited ? 0 : 2;
}

/** What an init answered, and the share counts to describe it. */
export interface InitDone {
  answer: Record<string, unknown>;
  n: { shares: number; threshold: number; rshares: number; rthreshold: number };
}

/** POST sys/init with the flags' share counts (keyShares, keyThreshold, recovery*, keychain). */
export async function initialise(inv: Invocation, given: Record<string, unknown>): Promise<InitDone> {
  const opts = { ...given };
  // One share needs no threshold flag (it can only be 1).
  if (opts.keyShares === 1) opts.keyThreshold ??= 1;
  if (opts.recoveryShares === 1) opts.recoveryThreshold ??= 1;
  const body: Record<string, unknown> = { keychain: opts.keychain };
  if (opts.keyShares !== undefined) body.secret_shares = opts.keyShares;
  if (opts.keyThreshold !== undefined) body.secret_threshold = opts.keyThreshold;
  if (opts.recoveryShares !== undefined) body.recovery_shares = opts.recoveryShares;
  if (opts.recoveryThreshold !== undefined) body.recovery_threshold = opts.recoveryThreshold;
  // PGP as the vault CLI: the shares (and token) come back encrypted; decrypt them with gpg --decrypt.
  if (typeof opts.pgpKeys === 'string') body.pgp_keys = pgpKeyFiles(opts.pgpKeys, '-pgp-keys');
  if (typeof opts.recoveryPgpKeys === 'string')
    body.recovery_pgp_keys = pgpKeyFiles(opts.recoveryPgpKeys, '-recovery-pgp-keys');
  if (typeof opts.rootTokenPgpKey === 'string')
    body.root_token_pgp_key = pgpKeyFile(opts.rootTokenPgpKey, '-root-token-pgp-key');
  const res = await inv.client.request('POST', 'sys/init', body);
  const b = (res.body ?? {}) as Record<string, unknown>;
  const keys = (b.keys_base64 as string[] | undefined) ?? [];
  const rkeys = (b.recovery_keys_base64 as string[] | undefined) ?? [];
  const n = {
    shares: keys.length ? ((opts.keyShares as number | undefined) ?? keys.length) : 0,
    threshold: keys.length ? ((opts.keyThreshold as number | undefined) ?? 1) : 0,
    rshares: rkeys.length,
    rthreshold: rkeys.length ? ((opts.recoveryThreshold as number | undefined) ?? 1) : 0,
  };
  return { answer: b, n };
}

/** Vault's machine-readable init output [vault src command/operator_init.go], plus keyhold's fields. */
export function initOutput({ answer: b, n }: InitDone): Record<string, unknown> {
  const keys = (b.keys_base64 as string[] | undefined) ?? [];
  const out: Record<string, unknown> = {
    unseal_keys_b64: keys,
    unseal_keys_hex: (b.keys as string[] | undefined) ?? [],
    unseal_shares: n.shares,
    unseal_threshold: n.threshold,
    recovery_keys_b64: (b.recovery_keys_base64 as string[] | undefined) ?? [],
    recovery_keys_hex: (b.recovery_keys as string[] | undefined) ?? [],
    recovery_keys_shares: n.rshares,
    recovery_keys_threshold: n.rthreshold,
    root_token: b.root_token,
    keychain: b.keychain,
  };
  if (keys.length === 1) out.recovery_key = keys[0];
  return out;
}

export const init: CommandSpec = {
  words: ['operator', 'init'],
  summary:
    'Initialise storage: unseal key shares (or recovery key shares under an auto seal) and the root token are printed once; the OS keychain keeps the master key',
  flags: [
    flag(
      '--key-shares <n>',
      'number of unseal key shares to split the master key into (Vault: -key-shares; default 1)',
      { parse: int('key-shares') },
    ),
    flag('--key-threshold <n>', 'shares needed to unseal (default 1; more than 1 when shares > 1)', {
      parse: int('key-threshold'),
    }),
    flag('--recovery-shares <n>', 'auto seal: number of recovery key shares (default 1)', {
      parse: int('recovery-shares'),
    }),
    flag('--recovery-threshold <n>', 'auto seal: recovery shares needed (default 1)', {
      parse: int('recovery-threshold'),
    }),
    flag(
      '--pgp-keys <files>',
      'encrypt each unseal key share to a PGP public key: files (binary key or its base64), comma-separated, one per share',
    ),
    flag('--root-token-pgp-key <file>', 'encrypt the initial root token to this PGP public key (file)'),
    flag(
      '--recovery-pgp-keys <files>',
      'auto seal: encrypt each recovery share to a PGP public key (files, one per share)',
    ),
    flag('--status', 'only say whether the daemon is initialised (exit 0 yes, 2 no)'),
    flag('--no-keychain', 'do not store the master key in the OS keychain'),
  ],
  notes: 'Vault-style single-dash flags work too (-key-shares=5).',
  examples: [
    'keyhold operator init',
    'keyhold operator init -key-shares=5 -key-threshold=3 --format json > init.json',
    'keyhold operator init -key-shares=2 -key-threshold=2 -pgp-keys=alice.gpg,bob.gpg -root-token-pgp-key=alice.gpg',
  ],
  async run(inv) {
    if (inv.opts.status) return initStatus(inv);
    const done = await initialise(inv, inv.opts);
    if (!machineReadable(inv)) {
      inv.io.stdout.write(initText(done.answer, done.n));
      return;
    }
    await inv.print(initOutput(done));
  },
};
