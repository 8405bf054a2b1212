/**
 * `keyhold operator rekey`: new unseal key shares (or recovery shares with --target recovery) from a
 * quorum of the current ones: --init starts, shares on stdin advance, --verify gives new ones back.
 */
import { flag, optArg, type CommandSpec, type Invocation } from '../../command.js';
import type { ApiResponse } from '../../client.js';
import { LocalError } from '../../errors.js';
import { int, machineReadable, readShares } from './shares.js';

/** The text shown on a terminal when a rekey completes. */
function rekeyText(b: Record<string, unknown>, keyThreshold: number | undefined): string {
  let out = '';
  ((b.keys_base64 as string[]) ?? []).forEach((k, i) => (out += `Key ${i + 1}: ${k}\n`));
  out += `\nOperation nonce: ${b.nonce}\n\n`;
  if (b.verification_required) {
    out += `The new shares are not in use yet: give ${keyThreshold ?? 'the threshold'} of them back with \`keyhold operator rekey --verify\` (verification nonce ${b.verification_nonce}).\n`;
  } else if (((b.keys_base64 as string[]) ?? []).length) {
    out +=
      'keyhold rekeyed: the key shares above replace the old ones, which no longer unseal. Distribute them securely: they are shown only once.\n';
  } else {
    out += 'keyhold rekeyed: a new master key is stored wrapped by the auto seal.\n';
  }
  return out;
}

/** Give shares (current ones, or new ones with --verify) until the rekey completes. */
async function giveShares(inv: Invocation, base: string): Promise<void> {
  const client = inv.client;
  const verify = Boolean(inv.opts.verify);
  let nonce: string | undefined = inv.opts.nonce;
  if (!nonce) {
    const st = await client.request('GET', verify ? `${base}/verify` : `${base}/init`);
    nonce = String(st.body?.nonce ?? '');
    if (!verify && !st.body?.started)
      throw new LocalError('no rekey is in progress: start one with `keyhold operator rekey --init`');
  }
  const keys = await readShares(
    inv,
    inv.args.key,
    verify ? 'New key share (will be hidden): ' : 'Current unseal key share (will be hidden): ',
  );
  if (!keys.length) throw new LocalError('give a key share on stdin (one per line)');
  let res: ApiResponse | undefined;
  for (const key of keys) {
    res = await client.request('PUT', verify ? `${base}/verify` : `${base}/update`, { key, nonce });
    if (res.body?.complete) break;
  }
  const b = (res!.body ?? {}) as Record<string, unknown>;
  if (!b.complete || machineReadable(inv)) return inv.print(b);
  if (verify) inv.io.stdout.write(`Success! Rekey verified (nonce ${b.nonce}): the new key shares are now in use.\n`);
  else inv.io.stdout.write(rekeyText(b, inv.opts.keyThreshold));
}

export const rekey: CommandSpec = {
  words: ['operator', 'rekey'],
  summary: 'Make new unseal key shares (or recovery shares with --target recovery) from a quorum of the current ones',
  args: [optArg('key', '"-" (stdin, the default) or @file; never the key itself')],
  flags: [
    flag('--init', 'start a rekey (with --key-shares and --key-threshold)'),
    flag('--cancel', 'cancel the rekey in progress'),
    flag('--status', 'show the rekey in progress'),
    flag('--key-shares <n>', 'number of new key shares (default 1)', { parse: int('key-shares') }),
    flag('--key-threshold <n>', 'new shares needed (default 1)', { parse: int('key-threshold') }),
    flag('--nonce <nonce>', 'nonce of the rekey in progress (read from the daemon when absent)'),
    flag('--target <target>', 'which key: the unseal key (barrier) or the recovery key of an auto seal', {
      choices: ['barrier', 'recovery'],
      default: 'barrier',
    }),
    flag(
      '--verify',
      'with --init: require the new shares to be given back before the rekey takes effect; alone: give back new shares',
    ),
  ],
  stdin: 'key shares, one per line',
  notes: 'Vault-style single-dash flags work too (-init -key-shares=5).',
  examples: [
    'keyhold operator rekey --init --key-shares 5 --key-threshold 3',
    'keyhold operator rekey < old-shares.txt     # one current share per line; prints the new shares',
    'keyhold operator rekey --cancel',
  ],
  async run(inv) {
    const o = inv.opts;
    const base = o.target === 'recovery' ? 'sys/rekey-recovery-key' : 'sys/rekey';
    if (o.cancel) {
      await inv.client.request('DELETE', `${base}/init`);
      inv.success('Success! Canceled rekeying (if it was started)');
      return;
    }
    if (o.status) {
      const res = await inv.client.request('GET', `${base}/init`);
      await inv.print(res.body);
      return;
    }
    if (o.init) {
      const res = await inv.client.request('PUT', `${base}/init`, {
        secret_shares: o.keyShares ?? 1,
        secret_threshold: o.keyThreshold ?? 1,
        require_verification: Boolean(o.verify),
      });
      await inv.print(res.body);
      return;
    }
    await giveShares(inv, base);
  },
};
