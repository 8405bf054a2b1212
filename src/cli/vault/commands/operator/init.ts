/**
 * `vault operator init`: as the vault CLI, 5 key shares and a threshold of 3 unless -key-shares /
 * -key-threshold say otherwise, and the master key is not kept in a keychain (vault has none): the
 * shares are the way to unseal. Prints `Unseal Key 1: ...` lines and `Initial Root Token: ...`;
 * -format=json prints the vault CLI's JSON (unseal_keys_b64, root_token, ...). -status: exit 0 / 2.
 */
import { flag, type CommandSpec, type Invocation } from '../../../command.js';
import { init as keyholdInit, initialise, initOutput, type InitDone } from '../../../commands/operator/init.js';
import { machineReadable } from '../../../commands/operator/shares.js';

function text({ answer: b, n }: InitDone): string {
  const keys = (b.keys_base64 as string[] | undefined) ?? [];
  const rkeys = (b.recovery_keys_base64 as string[] | undefined) ?? [];
  let out = '';
  keys.forEach((k, i) => (out += `Unseal Key ${i + 1}: ${k}\n`));
  rkeys.forEach((k, i) => (out += `Recovery Key ${i + 1}: ${k}\n`));
  out += `\nInitial Root Token: ${String(b.root_token)}\n\n`;
  if (keys.length) {
    out += `Vault (keyhold) initialized with ${n.shares} key shares and a key threshold of ${n.threshold}. Keep the\n`;
    out += `key shares printed above apart and safe: after every restart or seal, ${n.threshold} of them\n`;
    out += 'are needed to unseal (`vault operator unseal`). They are not shown again.\n';
  } else out += 'Success! Vault (keyhold) is initialized; the auto seal unseals it at each start.\n';
  if (rkeys.length)
    out += `\nRecovery key initialized with ${n.rshares} key shares and a key threshold of ${n.rthreshold}.\n`;
  return out;
}

async function status(inv: Invocation): Promise<number> {
  const st = await inv.client.request('GET', 'sys/init');
  const inited = Boolean(st.body?.initialized);
  inv.io.stdout.write(inited ? 'Vault is initialized\n' : 'Vault is not initialized\n');
  return inited ? 0 : 2;
}

export const init: CommandSpec = {
  ...keyholdInit,
  summary:
    'Initialise the server: 5 unseal key shares, threshold 3 (vault defaults), and the initial root token, printed once',
  flags: [
    ...(keyholdInit.flags ?? []).filter((f) => !f.flags.startsWith('--no-keychain')),
    flag('--keychain', 'also keep the master key in the OS keychain (keyhold; vault has none)'),
  ],
  notes: undefined,
  examples: ['vault operator init', 'vault operator init -key-shares=1 -key-threshold=1 -format=json'],
  async run(inv) {
    const o = inv.opts;
    if (o.status) return status(inv);
    const shares = (o.keyShares as number | undefined) ?? (o.keyThreshold === 1 ? 1 : 5);
    const threshold = (o.keyThreshold as number | undefined) ?? (shares === 1 ? 1 : Math.min(3, shares));
    const done = await initialise(inv, {
      ...o,
      keyShares: shares,
      keyThreshold: threshold,
      keychain: Boolean(o.keychain),
    });
    if (machineReadable(inv)) return void (await inv.print(initOutput(done)));
    inv.io.stdout.write(text(done));
  },
};
