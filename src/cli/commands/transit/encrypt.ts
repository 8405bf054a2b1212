/** `keyhold transit encrypt NAME`: encrypt stdin (or --file); --envelope encrypts any size locally. */
import { flag, type CommandSpec } from '../../command.js';
import { bodyOf, fieldFlag, fieldFlags } from '../../route-flags.js';
import { INPUT, MOUNT, dataOf, inputBase64, intOpt, mountOf, seg } from './io.js';
import { ENCRYPT } from './routes.js';

const fields = [
  ...fieldFlags(ENCRYPT, ['context', 'associated_data']),
  fieldFlag(ENCRYPT, 'key_version', { parse: intOpt }),
  fieldFlag(ENCRYPT, 'nonce'),
  fieldFlag(ENCRYPT, 'padding_scheme', { value: 'scheme' }),
  fieldFlag(ENCRYPT, 'type', { value: 'type' }),
];

function tooLargeHint(stderr: { write(s: string): unknown }) {
  return (e: unknown): never => {
    if ((e as { status?: number }).status === 413)
      stderr.write('hint: the input exceeds the request size limit; use --envelope for large data\n');
    throw e;
  };
}

export const encrypt: CommandSpec = {
  words: ['transit', 'encrypt'],
  summary: 'Encrypt stdin (or --file) with a named key; prints the ciphertext (--field ciphertext for only it)',
  args: [{ name: 'name', help: 'key name' }],
  flags: [
    MOUNT,
    ...INPUT,
    ...fields,
    flag('--envelope', 'encrypt locally in chunks with a fresh data key (any size)'),
    flag('--output <path>', 'envelope: write to this file instead of stdout'),
  ],
  stdin: 'the plaintext bytes (unless --file)',
  examples: [
    'printf secret | keyhold transit encrypt app --field ciphertext',
    'keyhold transit encrypt app --envelope --file big.tar --output big.tar.khev',
  ],
  async run(inv) {
    const name = inv.args.name as string;
    if (inv.opts.envelope) {
      const { envelopeEncrypt } = await import('./envelope.js');
      return envelopeEncrypt(inv, name);
    }
    const body: Record<string, unknown> = { plaintext: await inputBase64(inv), ...bodyOf(fields, inv.opts) };
    const res = await inv.client.write(`${mountOf(inv)}/encrypt/${seg(name)}`, body).catch(tooLargeHint(inv.io.stderr));
    await inv.print(dataOf(res));
  },
};
