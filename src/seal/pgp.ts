/**
 * OpenPGP encryption of key shares and root tokens, as Vault does it (helper/pgpkeys:
 * EncryptShares, GetFingerprints): each public key arrives base64-encoded (binary OpenPGP, as
 * `gpg --export KEYID | base64`), the fingerprint is the primary key's, lower-case hex, and the
 * message is a binary OpenPGP message any OpenPGP tool opens (`base64 -d | gpg -d`).
 *
 * keyhold does not implement OpenPGP itself. It uses, in this order:
 * 1. the `openpgp` npm package (OpenPGP.js) when it is installed, through its documented API
 *    (readKey, createMessage, encrypt, getFingerprint);
 * 2. GnuPG (`gpg` on PATH) in a throw-away home directory holding only the given public key; the
 *    plaintext goes through a pipe, never argv or disk.
 * With neither, a request naming PGP keys is refused with 400 before anything changes.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { invalid } from '../framework/errors.js';

/** An encrypted message and the fingerprint of the key it was encrypted to. */
export interface PgpEncrypted {
  fingerprint: string;
  ciphertext: Buffer;
}

/** The subset of OpenPGP.js (v5/v6) used here, as documented at openpgpjs.org. */
interface OpenPgpModule {
  readKey(opts: { binaryKey: Uint8Array }): Promise<{ getFingerprint(): string }>;
  createMessage(opts: { binary: Uint8Array }): Promise<unknown>;
  encrypt(opts: { message: unknown; encryptionKeys: unknown; format: 'binary' }): Promise<Uint8Array>;
}

let openpgpLoad: Promise<OpenPgpModule | null> | null = null;

/** OpenPGP.js when installed (a name in a variable: it is an optional dependency). */
function openpgp(): Promise<OpenPgpModule | null> {
  const name = 'openpgp';
  openpgpLoad ??= (import(name) as Promise<OpenPgpModule>).catch(() => null);
  return openpgpLoad;
}

/** Decode one entry of `pgp_keys` (base64 of a binary public key); 400 naming `field` when it is not. */
export function decodePgpKey(text: string, field: string): Buffer {
  if (text.startsWith('keybase:'))
    throw invalid(field, 'keybase: keys are not supported; give the base64 of `gpg --export KEYID`');
  const t = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(t))
    throw invalid(field, 'must be the base64 encoding of a binary OpenPGP public key (gpg --export KEYID | base64)');
  const b = Buffer.from(t, 'base64');
  // A binary OpenPGP packet starts with a tag byte whose high bit is set (RFC 4880 4.2).
  if (b.length < 16 || (b[0]! & 0x80) === 0)
    throw invalid(
      field,
      'is not a binary OpenPGP public key (ASCII armor is not accepted: give the base64 of the binary key)',
    );
  return b;
}

function run(
  cmd: string,
  args: string[],
  input: Buffer | null,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    p.stdout.on('data', (c: Buffer) => out.push(c));
    p.stderr.on('data', (c: Buffer) => (err += c.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code: code ?? 1, stdout: Buffer.concat(out), stderr: err }));
    p.stdin.on('error', () => {});
    p.stdin.end(input ?? undefined);
  });
}

/** GnuPG with a private, empty home directory holding `key` only; `fn` runs with it. */
async function withGpg<T>(
  key: Buffer,
  field: string,
  fn: (gpg: (args: string[], input: Buffer | null) => ReturnType<typeof run>, fingerprint: string) => Promise<T>,
): Promise<T> {
  const home = await mkdtemp(join(tmpdir(), 'keyhold-gpg-'));
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', GNUPGHOME: home, LANG: 'C' };
  const gpg = (args: string[], input: Buffer | null) =>
    run('gpg', ['--batch', '--no-tty', '--quiet', '--homedir', home, ...args], input, env);
  try {
    let imp;
    try {
      // Create the keybox and trust database first: a fresh home's first import has been seen to fail
      // with "Invalid keyring" while gpg makes them; then import, retrying that failure a few times.
      await gpg(['--list-keys'], null);
      imp = await gpg(['--import'], key);
      for (let attempt = 1; attempt < 4 && imp.code !== 0 && /invalid keyring/i.test(imp.stderr); attempt++) {
        await new Promise((r) => setTimeout(r, 50 * attempt));
        imp = await gpg(['--import'], key);
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT')
        throw invalid(
          field,
          'PGP encryption needs OpenPGP.js (npm package openpgp) or GnuPG (gpg) on the server; neither is installed',
        );
      throw e;
    }
    if (imp.code !== 0)
      throw invalid(
        field,
        `is not a usable OpenPGP public key (${imp.stderr.trim().split('\n').pop() ?? 'gpg refused it'})`,
      );
    const list = await gpg(['--with-colons', '--fingerprint'], null);
    const fpr = /^fpr:(?:[^:]*:){8}([0-9A-F]+):/m.exec(list.stdout.toString('utf8'))?.[1];
    if (!fpr) throw invalid(field, 'holds no public key');
    return await fn(gpg, fpr.toLowerCase());
  } finally {
    // An agent gpg may have started for this home goes with it.
    await run('gpgconf', ['--homedir', home, '--kill', 'all'], null, env).catch(() => {});
    await rm(home, { recursive: true, force: true });
  }
}

/** Fingerprint (lower-case hex) of a `pgp_keys` entry; 400 naming `field` when it is not a usable key. */
export async function pgpFingerprint(keyText: string, field: string): Promise<string> {
  const key = decodePgpKey(keyText, field);
  const lib = await openpgp();
  if (lib) {
    try {
      return (await lib.readKey({ binaryKey: key })).getFingerprint().toLowerCase();
    } catch (e) {
      throw invalid(field, `is not a usable OpenPGP public key (${(e as Error).message})`);
    }
  }
  return withGpg(key, field, async (_gpg, fpr) => fpr);
}

/** Encrypt `plaintext` to one `pgp_keys` entry. */
export async function pgpEncrypt(keyText: string, plaintext: Buffer, field: string): Promise<PgpEncrypted> {
  const key = decodePgpKey(keyText, field);
  const lib = await openpgp();
  if (lib) {
    try {
      const pub = await lib.readKey({ binaryKey: key });
      const message = await lib.createMessage({ binary: plaintext });
      const ct = await lib.encrypt({ message, encryptionKeys: pub, format: 'binary' });
      return { fingerprint: pub.getFingerprint().toLowerCase(), ciphertext: Buffer.from(ct) };
    } catch (e) {
      throw invalid(field, `cannot encrypt to this key (${(e as Error).message})`);
    }
  }
  return withGpg(key, field, async (gpg, fingerprint) => {
    const r = await gpg(
      ['--trust-model', 'always', '--encrypt', '--recipient', fingerprint, '--output', '-'],
      plaintext,
    );
    if (r.code !== 0 || r.stdout.length === 0)
      throw invalid(field, `cannot encrypt to this key (${r.stderr.trim().split('\n').pop() ?? 'gpg failed'})`);
    return { fingerprint, ciphertext: r.stdout };
  });
}

/**
 * Vault's EncryptShares for key shares: each share hex-encoded, then encrypted to the key at the
 * same position (vault/init.go and vault/rekey.go hex-encode the shares first).
 */
export async function encryptShares(shares: Buffer[], keys: string[], field: string): Promise<PgpEncrypted[]> {
  if (shares.length !== keys.length)
    throw invalid(field, `${keys.length} PGP keys given for ${shares.length} shares; give one key per share`);
  const out: PgpEncrypted[] = [];
  for (let i = 0; i < shares.length; i++) {
    const hex = Buffer.from(shares[i]!.toString('hex'), 'utf8');
    try {
      out.push(await pgpEncrypt(keys[i]!, hex, `${field}[${i}]`));
    } finally {
      hex.fill(0);
    }
  }
  return out;
}
