/** `keyhold transit decrypt NAME [CIPHERTEXT]`: raw plaintext bytes to stdout; --envelope decrypts an envelope. */
import { flag, optArg, type CommandSpec } from '../../command.js';
import { bodyOf, fieldFlag, fieldFlags } from '../../route-flags.js';
import { MOUNT, argOrStdin, dataOf, mountOf, seg, structured, writeOut } from './io.js';
import { DECRYPT } from './routes.js';

const fields = [
  ...fieldFlags(DECRYPT, ['context', 'associated_data', 'nonce']),
  fieldFlag(DECRYPT, 'padding_scheme', { value: 'scheme' }),
];

export const decrypt: CommandSpec = {
  words: ['transit', 'decrypt'],
  summary: 'Decrypt a ciphertext (argument or stdin) and write the raw plaintext bytes to stdout',
  args: [
    { name: 'name', help: 'key name' },
    optArg('ciphertext', 'vault:vN:... ciphertext (default: read from stdin)'),
  ],
  flags: [
    MOUNT,
    flag('--base64', 'print the plaintext base64-encoded instead of raw bytes'),
    ...fields,
    flag('--envelope', 'decrypt an envelope made by `transit encrypt --envelope`'),
    flag('--file <path>', 'envelope: read from this file instead of stdin'),
    flag('--output <path>', 'envelope: write to this file instead of stdout'),
  ],
  stdin: 'the ciphertext when not given as an argument (with --envelope: the envelope, unless --file)',
  examples: [
    'keyhold transit decrypt app vault:v1:... > secret.bin',
    'keyhold transit decrypt app --envelope --file big.tar.khev --output big.tar',
  ],
  async run(inv) {
    const name = inv.args.name as string;
    if (inv.opts.envelope) {
      const { envelopeDecrypt } = await import('./envelope.js');
      return envelopeDecrypt(inv, name);
    }
    const body: Record<string, unknown> = {
      ciphertext: await argOrStdin(inv, inv.args.ciphertext, 'ciphertext'),
      ...bodyOf(fields, inv.opts),
    };
    const res = await inv.client.write(`${mountOf(inv)}/decrypt/${seg(name)}`, body);
    const data = dataOf(res);
    if (structured(inv)) return inv.print(data);
    const pt = String(data.plaintext ?? '');
    await writeOut(inv, inv.opts.base64 ? pt + '\n' : Buffer.from(pt, 'base64'));
  },
};
