/**
 * `keyhold operator generate-root`: a new root token from a quorum of unseal key shares (recovery
 * shares under an auto seal), as vault's operator generate-root: -init (the server makes the OTP
 * unless -otp or -pgp-key is given), shares on stdin, -decode with -otp, -status, -cancel,
 * -generate-otp. The token comes back XORed with the OTP (Vault >= 1.10: base64 without padding of
 * token XOR otp) or encrypted to the PGP key.
 */
import { randomInt } from 'node:crypto';
import { flag, optArg, type CommandSpec, type Invocation } from '../../command.js';
import { LocalError } from '../../errors.js';
import { pgpKeyFile } from '../../pgp-key-file.js';
import { machineReadable, readShares } from './shares.js';

/** Root token and OTP length (Vault >= 1.10): "hvs." + 24 base62 characters. */
const OTP_LENGTH = 28;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Undo Vault's OTP encoding of a generated root token: base64 (unpadded) of token XOR otp. */
export function decodeRootToken(encoded: string, otp: string): string {
  const e = Buffer.from(encoded.trim(), 'base64');
  const o = Buffer.from(otp.trim(), 'utf8');
  if (e.length !== o.length) {
    throw new LocalError(
      `the encoded token is ${e.length} bytes long but the OTP is ${o.length}: use the OTP the generation was started with`,
    );
  }
  const out = Buffer.alloc(e.length);
  for (let i = 0; i < e.length; i++) out[i] = e[i]! ^ o[i]!;
  return out.toString('utf8');
}

/** The vault CLI's table of a generation's status. */
function view(b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    Nonce: b.nonce,
    Started: b.started,
    Progress: `${b.progress}/${b.required}`,
    Complete: b.complete,
  };
  if (b.encoded_token) out['Encoded Token'] = b.encoded_token;
  if (b.otp) out.OTP = b.otp;
  if (b.pgp_fingerprint) out['PGP Fingerprint'] = b.pgp_fingerprint;
  out['OTP Length'] = b.otp_length;
  return out;
}

async function printStatus(inv: Invocation, b: Record<string, unknown>): Promise<void> {
  await inv.print(machineReadable(inv) ? b : view(b));
}

/** Give shares until the generation completes. */
async function giveShares(inv: Invocation): Promise<void> {
  let nonce: string | undefined = inv.opts.nonce;
  if (!nonce) {
    const st = await inv.client.request('GET', 'sys/generate-root/attempt');
    if (!st.body?.started)
      throw new LocalError(
        'no root token generation is in progress: start one with `keyhold operator generate-root -init`',
      );
    nonce = String(st.body.nonce);
  }
  const keys = await readShares(inv, inv.args.key, 'Unseal key share (will be hidden): ');
  if (!keys.length) throw new LocalError('give a key share on stdin (one per line)');
  let b: Record<string, unknown> = {};
  for (const key of keys) {
    b = ((await inv.client.request('PUT', 'sys/generate-root/update', { key, nonce })).body ?? {}) as Record<
      string,
      unknown
    >;
    if (b.complete) break;
  }
  await printStatus(inv, b);
}

export const generateRoot: CommandSpec = {
  words: ['operator', 'generate-root'],
  summary: 'Make a new root token from a quorum of unseal key shares (recovery shares under an auto seal)',
  args: [optArg('key', '"-" (stdin, the default) or @file with one key share per line; never the key itself')],
  flags: [
    flag('--init', 'start a root token generation (the server makes the OTP unless --otp or --pgp-key is given)'),
    flag('--cancel', 'cancel the generation in progress'),
    flag('--status', 'show the generation in progress'),
    flag('--generate-otp', 'print a fresh OTP of the right length and exit (no server needed)'),
    flag(
      '--otp <otp>',
      'with --init: the OTP to encode the token with; with --decode: the OTP it was encoded with (@file or - for stdin)',
    ),
    flag(
      '--decode <encoded>',
      'decode an encoded token with --otp and print the root token (no server needed; @file or -)',
    ),
    flag(
      '--pgp-key <file>',
      'with --init: encrypt the token to this OpenPGP public key file (binary, as gpg --export writes it)',
    ),
    flag('--nonce <nonce>', 'nonce of the generation in progress (read from the daemon when absent)'),
  ],
  stdin: 'key shares, one per line',
  notes: 'Vault-style single-dash flags work too (-init, -decode=... -otp=...).',
  examples: [
    'keyhold operator generate-root -init',
    'keyhold operator generate-root < shares.txt',
    'keyhold operator generate-root -decode=ENCODED -otp=OTP',
    'keyhold operator generate-root -init -pgp-key=ops.gpg',
  ],
  async run(inv) {
    const o = inv.opts;
    if (o.generateOtp) {
      let otp = '';
      for (let i = 0; i < OTP_LENGTH; i++) otp += BASE62[randomInt(62)];
      inv.io.stdout.write(`${otp}\n`);
      return;
    }
    if (o.decode !== undefined) {
      if (!o.otp) throw new LocalError('--decode needs --otp (the OTP the generation was started with)');
      const token = decodeRootToken(await inv.valueOf(o.decode), await inv.valueOf(o.otp));
      if (inv.globals.format === 'json' || inv.globals.format === 'yaml') return inv.print({ token });
      inv.io.stdout.write(`${token}\n`);
      return;
    }
    if (o.cancel) {
      await inv.client.request('DELETE', 'sys/generate-root/attempt');
      inv.success('Success! Root token generation canceled (if it was started)');
      return;
    }
    if (o.status)
      return printStatus(
        inv,
        ((await inv.client.request('GET', 'sys/generate-root/attempt')).body ?? {}) as Record<string, unknown>,
      );
    if (o.init) {
      if (o.otp && o.pgpKey) throw new LocalError('give --otp or --pgp-key, not both');
      const body: Record<string, unknown> = {};
      if (o.otp) body.otp = await inv.valueOf(o.otp);
      if (o.pgpKey) body.pgp_key = pgpKeyFile(o.pgpKey);
      return printStatus(
        inv,
        ((await inv.client.request('PUT', 'sys/generate-root/attempt', body)).body ?? {}) as Record<string, unknown>,
      );
    }
    await giveShares(inv);
  },
};
