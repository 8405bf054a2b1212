/**
 * BYOK import (`transit import`, `transit import-version`): fetch the mount's wrapping key and wrap the
 * key file locally, so key material never travels in the clear; a PEM public key is imported as is.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import type { Invocation } from '../../command.js';
import { LocalError } from '../../errors.js';
import { importHash, wrapForImport } from '../../../engines/transit/keyring/byok.js';
import { pemBlocks } from '../../../engines/transit/keyring/der.js';
import { KEY_TYPES, keyTypeInfo } from '../../../engines/transit/keyring/key-types.js';
import { mountOf } from './io.js';
import { enc, readSource } from './keys/output.js';

/**
 * Turn a key file into import material for `type`: a PEM private key (any of PKCS#8, PKCS#1, SEC 1)
 * becomes PKCS#8 DER; a PEM public key selects a public-key-only import; other bytes are taken as-is
 * (raw symmetric/hmac key, or PKCS#8 DER), or base64-decoded with `--base64`.
 */
export function keyFileMaterial(
  type: string,
  file: Buffer,
  base64: boolean,
): { material?: Buffer; publicKey?: string } {
  const info = keyTypeInfo(type);
  if (!info) throw new LocalError(`unknown key type "${type}"; one of ${Object.keys(KEY_TYPES).join(', ')}`);
  const text = file.toString('utf8');
  const blocks = text.includes('-----BEGIN ') ? pemBlocks(text) : [];
  if (blocks.length) {
    const b = blocks[0]!;
    if (b.label === 'PUBLIC KEY') return { publicKey: text.slice(text.indexOf('-----BEGIN PUBLIC KEY-----')) };
    if (!/PRIVATE KEY$/.test(b.label))
      throw new LocalError(`unsupported PEM block "${b.label}": give a PRIVATE KEY or PUBLIC KEY`);
    if (info.kind !== 'asymmetric')
      throw new LocalError(`a PEM key cannot be imported as ${type}; give the raw key bytes`);
    try {
      const k = createPrivateKey({ key: text, format: 'pem' });
      return { material: Buffer.from(k.export({ format: 'der', type: 'pkcs8' })) };
    } catch {
      // PKCS#8 variants node cannot load (RSASSA-PSS, NSS Ed25519): send the DER and let the server decide.
      return { material: b.der };
    }
  }
  let bytes = file;
  if (base64) {
    const s = text.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s)) throw new LocalError('--base64: the file is not base64');
    bytes = Buffer.from(s, 'base64');
  }
  if (info.kind === 'asymmetric') {
    try {
      createPrivateKey({ key: bytes, format: 'der', type: 'pkcs8' });
    } catch {
      /* the server accepts more PKCS#8 variants; it will answer precisely */
    }
  }
  return { material: bytes };
}

/** Wrap the key file of --file and send it to `keys/NAME/<endpoint>` with `extra` fields. */
export async function byokSend(
  inv: Invocation,
  name: string,
  endpoint: 'import' | 'import_version',
  extra: Record<string, unknown>,
): Promise<void> {
  const o = inv.opts as { file: string; type?: string; hashFunction: string; base64?: boolean };
  const mount = mountOf(inv);
  const client = inv.client;
  let type = o.type;
  if (!type && endpoint === 'import_version') {
    const res = await client.request('GET', `${mount}/keys/${enc(name)}`);
    type = String((res.body?.data as { type?: string } | undefined)?.type ?? '');
  }
  type ??= 'aes256-gcm96';
  const hash = (() => {
    try {
      return importHash(o.hashFunction);
    } catch {
      throw new LocalError(
        `--hash-function: unknown hash function ${o.hashFunction}; use SHA1, SHA224, SHA256, SHA384 or SHA512`,
      );
    }
  })();
  const { material, publicKey } = keyFileMaterial(type, await readSource(inv, o.file), Boolean(o.base64));
  const body: Record<string, unknown> = { ...extra };
  if (endpoint === 'import') body.type = type;
  if (publicKey) body.public_key = publicKey;
  else {
    const wk = await client.request('GET', `${mount}/wrapping_key`);
    const pem = String((wk.body?.data as { public_key?: string } | undefined)?.public_key ?? '');
    body.ciphertext = wrapForImport(createPublicKey(pem), material!, hash).toString('base64');
    body.hash_function = o.hashFunction.toUpperCase();
  }
  await client.request('POST', `${mount}/keys/${enc(name)}/${endpoint}`, body);
  inv.io.stderr.write(
    `Success! ${endpoint === 'import' ? 'Imported key' : 'Imported a version into key'} ${name} (${publicKey ? 'public key only' : type})\n`,
  );
}
