/**
 * Sign and verify with asymmetric transit keys, byte-compatible with Vault (reference transit-wire.md
 * sections 4.6-4.8): ECDSA (asn1 DER or JWS r||s), pure Ed25519 (derived keys from the context), RSA
 * PSS (salt auto|hash|n) and PKCS#1 v1.5 (with DigestInfo; raw for hash `none`). node:crypto does the
 * work; @noble/curves only signs/verifies ECDSA over a caller-supplied digest, which node cannot.
 */
import {
  constants,
  createHash,
  createPublicKey,
  sign as nodeSign,
  verify as nodeVerify,
  type KeyObject,
  type SignKeyObjectInput,
  type VerifyKeyObjectInput,
} from 'node:crypto';
import { p256, p384, p521 } from '@noble/curves/nist.js';
import { invalid } from '../../../framework/errors.js';
import { KEY_TYPES } from '../keyring/key-types.js';
import { MISSING_CONTEXT, deriveEd25519 } from '../keyring/derive.js';
import type { KeyVersion, TransitKey } from '../keyring/types.js';
import { hashAlgorithm, type HashAlgorithm } from './hash-algorithms.js';
import { liveVersion } from './key-versions.js';
import { decodeRawUrlBase64, decodeStdBase64, parseVersioned, versionPrefix } from './version-prefix.js';
import { encodeDerSignature, parseDerSignature, splitJws, toFixed } from './ecdsa-der.js';
import {
  maxPssSalt,
  modulusBits,
  pkcs1SignRaw,
  pkcs1VerifyRaw,
  pssSignDigest,
  pssVerifyDigest,
} from './rsa-padding.js';
import { checkPqRequest, pqSign, pqSignAsync, pqVerify, pqVerifyAsync } from '../pq/pq-signing.js';

/** Signature marshalings. */
export type Marshaling = 'asn1' | 'jws';

/** Options shared by sign and verify (already parsed). */
export interface SignatureOptions {
  hash: HashAlgorithm;
  prehashed: boolean;
  /** RSA: `pss` or `pkcs1v15`. */
  signatureAlgorithm: string;
  marshaling: Marshaling;
  /** Go semantics: 0 = auto, -1 = hash length, n = n bytes. */
  saltLength: number;
}

const CURVES = {
  'P-256': { size: 32, noble: p256 },
  'P-384': { size: 48, noble: p384 },
  'P-521': { size: 66, noble: p521 },
} as const;

/** Parse `hash_algorithm` (`invalid hash algorithm "x"`). */
export function parseHashAlgorithm(name: string): HashAlgorithm {
  const alg = hashAlgorithm(name);
  if (!alg || !alg.sign) throw invalid(`invalid hash algorithm ${JSON.stringify(name)}`);
  return alg;
}

/** Parse `marshaling_algorithm` (`invalid marshaling type "x"`). */
export function parseMarshaling(name: string): Marshaling {
  if (name !== 'asn1' && name !== 'jws') throw invalid(`invalid marshaling type ${JSON.stringify(name)}`);
  return name;
}

/** Parse `salt_length`: auto | hash | integer >= -1 (reference 4.7). */
export function parseSaltLength(text: string): number {
  if (text === 'auto' || text === '') return 0;
  if (text === 'hash') return -1;
  if (!/^[+-]?\d{1,9}$/.test(text))
    throw invalid(`salt length neither 'auto', 'hash', nor an int: ${text.slice(0, 32)}`);
  const n = Number(text);
  if (n < -1) throw invalid(`salt length is invalid: ${n}`);
  return n;
}

/**
 * Request-level rules before any item is processed: the key must sign, sha1 may be refused by the
 * key's `disallow_sha1`, `none` needs prehashed pkcs1v15, Ed25519 is pure only.
 */
export function checkSignatureRequest(key: TransitKey, opts: SignatureOptions, explicitHash: boolean): void {
  const info = KEY_TYPES[key.type];
  if (!info.sign || info.kind === 'managed') throw invalid(`key type ${key.type} does not support signing`);
  if (info.kind === 'pqc') return checkPqRequest(key, { prehashed: opts.prehashed, hash: opts.hash.name });
  if (key.disallowSha1 && opts.hash.name === 'sha1' && key.type !== 'ed25519') {
    throw invalid(`hash_algorithm: sha1 is disallowed for key "${key.name}" (disallow_sha1 is set in its config)`);
  }
  if (opts.hash.name === 'none' && !(opts.prehashed && opts.signatureAlgorithm === 'pkcs1v15')) {
    throw invalid('hash_algorithm=none requires both prehashed=true and signature_algorithm=pkcs1v15');
  }
  if (key.type === 'ed25519') {
    if (opts.prehashed) throw invalid('only Pure Ed25519 signatures supported, prehashed must be false');
    if (explicitHash && opts.hash.name === 'sha2-512')
      throw invalid('only Pure Ed25519 signatures supported, hash_alogithm should not be set');
  }
  if (info.rsaBits && opts.signatureAlgorithm !== 'pss' && opts.signatureAlgorithm !== 'pkcs1v15') {
    throw invalid(`unsupported rsa signature algorithm ${opts.signatureAlgorithm}`);
  }
}

function encodeSig(sig: Buffer, m: Marshaling): string {
  return m === 'jws' ? sig.toString('base64url') : sig.toString('base64');
}

function checkDigest(opts: SignatureOptions, digest: Buffer): void {
  if (opts.hash.size && digest.length !== opts.hash.size) {
    throw invalid(`input: a prehashed ${opts.hash.name} digest must be ${opts.hash.size} bytes, got ${digest.length}`);
  }
}

function pssSalt(pub: KeyObject, opts: SignatureOptions): { max: number; hLen: number } {
  const hLen = opts.hash.size;
  const max = maxPssSalt(modulusBits(pub), hLen);
  if (opts.saltLength < -1 || opts.saltLength > max)
    throw invalid(`requested salt length ${opts.saltLength} is invalid`);
  return { max, hLen };
}

function ed25519Keys(
  key: TransitKey,
  v: KeyVersion,
  context: Buffer | undefined,
): { priv?: KeyObject; pub?: KeyObject; derivedPublic?: Buffer } {
  if (!key.derived) return { priv: v.privateKey, pub: v.publicKey };
  if (!context || context.length === 0) throw invalid(MISSING_CONTEXT);
  if (!v.key) throw invalid('no such key version');
  const d = deriveEd25519(key.kdf, v.key, context);
  return { priv: d.privateKey, pub: d.publicKey, derivedPublic: d.publicRaw };
}

/** A node:crypto sign/verify call still to make: the caller runs it inline or on the thread pool. */
interface NodeCall {
  alg: string | null;
  data: Buffer;
  key: KeyObject | SignKeyObjectInput | VerifyKeyObjectInput;
}

/** Everything of a signature except (possibly) the node:crypto call itself. */
interface SignPlan {
  sig?: Buffer;
  call?: NodeCall;
  publicKey?: Buffer;
}

function planSign(
  key: TransitKey,
  ver: number,
  input: Buffer,
  context: Buffer | undefined,
  opts: SignatureOptions,
): SignPlan {
  const v = liveVersion(key, ver);
  const info = KEY_TYPES[key.type];
  let sig: Buffer | undefined;
  let call: NodeCall | undefined;
  let publicKey: Buffer | undefined;
  if (info.kind === 'pqc') {
    sig = pqSign(key, v, input, { prehashed: opts.prehashed, hash: opts.hash.name });
  } else if (key.type === 'ed25519') {
    const k = ed25519Keys(key, v, context);
    if (!k.priv) throw invalid('requested version for signing does not contain a private part');
    call = { alg: null, data: input, key: k.priv };
    publicKey = k.derivedPublic;
  } else if (info.curve) {
    const priv = v.privateKey;
    if (!priv) throw invalid('requested version for signing does not contain a private part');
    if (!opts.prehashed) {
      call = {
        alg: opts.hash.node,
        data: input,
        key: { key: priv, dsaEncoding: opts.marshaling === 'jws' ? 'ieee-p1363' : 'der' },
      };
    } else {
      const c = CURVES[info.curve];
      const d = Buffer.from(priv.export({ format: 'jwk' }).d!, 'base64url');
      const compact = c.noble.sign(input, d, { prehash: false, lowS: false, extraEntropy: true, format: 'compact' });
      sig = Buffer.from(compact);
      if (opts.marshaling === 'asn1') {
        const { r, s } = splitJws(sig);
        sig = encodeDerSignature(r, s);
      }
    }
  } else if (info.rsaBits) {
    const priv = v.privateKey;
    if (!priv) throw invalid('requested version for signing does not contain a private part');
    if (opts.signatureAlgorithm === 'pss') {
      const { max, hLen } = pssSalt(priv, opts);
      const salt = opts.saltLength === 0 ? max : opts.saltLength === -1 ? hLen : opts.saltLength;
      if (!opts.prehashed)
        call = {
          alg: opts.hash.node,
          data: input,
          key: { key: priv, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: salt },
        };
      else {
        checkDigest(opts, input);
        sig = pssSignDigest(priv, opts.hash.node!, input, salt);
      }
    } else if (!opts.prehashed) {
      call = { alg: opts.hash.node, data: input, key: { key: priv, padding: constants.RSA_PKCS1_PADDING } };
    } else {
      checkDigest(opts, input);
      const data = opts.hash.name === 'none' ? input : Buffer.concat([Buffer.from(opts.hash.digestInfo, 'hex'), input]);
      const k = Math.ceil(modulusBits(priv) / 8);
      if (data.length > k - 11)
        throw invalid(`input: too long for PKCS#1 v1.5 with this key (at most ${k - 11} bytes)`);
      sig = pkcs1SignRaw(priv, data);
    }
  } else {
    throw invalid(`key type ${key.type} does not support signing`);
  }
  return { sig, call, publicKey };
}

/** Sign `input` with version `ver` (already selected); returns `vault:vN:<sig>` and, for derived Ed25519, the public key. */
export function signWithKey(
  key: TransitKey,
  ver: number,
  input: Buffer,
  context: Buffer | undefined,
  opts: SignatureOptions,
): { signature: string; publicKey?: Buffer } {
  const p = planSign(key, ver, input, context, opts);
  const sig = p.sig ?? nodeSign(p.call!.alg, p.call!.data, p.call!.key as SignKeyObjectInput);
  return { signature: versionPrefix(ver) + encodeSig(sig, opts.marshaling), publicKey: p.publicKey };
}

/** As signWithKey, with the node:crypto work on libuv's thread pool (batches use every core). */
export async function signWithKeyAsync(
  key: TransitKey,
  ver: number,
  input: Buffer,
  context: Buffer | undefined,
  opts: SignatureOptions,
): Promise<{ signature: string; publicKey?: Buffer }> {
  if (KEY_TYPES[key.type].kind === 'pqc') {
    const sig = await pqSignAsync(key, liveVersion(key, ver), input, {
      prehashed: opts.prehashed,
      hash: opts.hash.name,
    });
    return { signature: versionPrefix(ver) + encodeSig(sig, opts.marshaling) };
  }
  const p = planSign(key, ver, input, context, opts);
  const c = p.call;
  const sig =
    p.sig ??
    (await new Promise<Buffer>((resolve, reject) =>
      nodeSign(c!.alg, c!.data, c!.key as SignKeyObjectInput, (e, s) => (e ? reject(e) : resolve(s))),
    ));
  return { signature: versionPrefix(ver) + encodeSig(sig, opts.marshaling), publicKey: p.publicKey };
}

function publicOf(v: KeyVersion): KeyObject | undefined {
  return v.publicKey ?? (v.privateKey ? createPublicKey(v.privateKey) : undefined);
}

/** A verification: decided already, or a node:crypto call to make. */
type VerifyPlan = { result: boolean } | { call: NodeCall; sig: Buffer };

function planVerify(
  key: TransitKey,
  input: Buffer,
  context: Buffer | undefined,
  signature: string,
  opts: SignatureOptions,
): VerifyPlan {
  const info = KEY_TYPES[key.type];
  const { version, payload } = parseVersioned(signature, 'signature', key);
  const raw = opts.marshaling === 'jws' ? decodeRawUrlBase64(payload) : decodeStdBase64(payload);
  if (!raw) throw invalid('invalid base64 signature value');
  if (info.kind === 'pqc')
    return {
      result: pqVerify(key, liveVersion(key, version), input, raw, { prehashed: opts.prehashed, hash: opts.hash.name }),
    };
  if (info.curve) {
    let rs: { r: bigint; s: bigint };
    if (opts.marshaling === 'asn1') {
      const parsed = parseDerSignature(raw);
      if (parsed === 'invalid') throw invalid('supplied signature is invalid');
      if (parsed === 'extra') throw invalid('supplied signature contains extra data');
      rs = parsed;
    } else rs = splitJws(raw);
    const v = liveVersion(key, version);
    const pub = publicOf(v);
    if (!pub) throw invalid('no such key version');
    const c = CURVES[info.curve];
    const fixed = toFixed(rs.r, rs.s, c.size);
    if (!fixed || rs.r === 0n || rs.s === 0n) return { result: false };
    if (!opts.prehashed)
      return { call: { alg: opts.hash.node, data: input, key: { key: pub, dsaEncoding: 'ieee-p1363' } }, sig: fixed };
    const jwk = pub.export({ format: 'jwk' });
    const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
    return {
      result: safe(() => c.noble.verify(fixed, input, point, { prehash: false, lowS: false, format: 'compact' })),
    };
  }
  const v = liveVersion(key, version);
  if (key.type === 'ed25519') {
    const k = ed25519Keys(key, v, context);
    const pub = k.pub ?? (k.priv ? createPublicKey(k.priv) : undefined);
    if (!pub) throw invalid('no such key version');
    return raw.length === 64 ? { call: { alg: null, data: input, key: pub }, sig: raw } : { result: false };
  }
  if (info.rsaBits) {
    const pub = publicOf(v);
    if (!pub) throw invalid('no such key version');
    if (opts.signatureAlgorithm === 'pss') {
      const { hLen } = pssSalt(pub, opts);
      const salt = opts.saltLength === 0 ? null : opts.saltLength === -1 ? hLen : opts.saltLength;
      if (!opts.prehashed) {
        return {
          call: {
            alg: opts.hash.node,
            data: input,
            key: {
              key: pub,
              padding: constants.RSA_PKCS1_PSS_PADDING,
              saltLength: salt ?? constants.RSA_PSS_SALTLEN_AUTO,
            },
          },
          sig: raw,
        };
      }
      checkDigest(opts, input);
      return { result: pssVerifyDigest(pub, opts.hash.node!, input, raw, salt) };
    }
    if (!opts.prehashed)
      return {
        call: { alg: opts.hash.node, data: input, key: { key: pub, padding: constants.RSA_PKCS1_PADDING } },
        sig: raw,
      };
    checkDigest(opts, input);
    const expected =
      opts.hash.name === 'none' ? input : Buffer.concat([Buffer.from(opts.hash.digestInfo, 'hex'), input]);
    return { result: pkcs1VerifyRaw(pub, expected, raw) };
  }
  throw invalid(`key type ${key.type} does not support verification`);
}

/** Verify a `vault:vN:` signature over `input`; malformed signatures throw Vault's errors, a wrong one returns false. */
export function verifyWithKey(
  key: TransitKey,
  input: Buffer,
  context: Buffer | undefined,
  signature: string,
  opts: SignatureOptions,
): boolean {
  const p = planVerify(key, input, context, signature, opts);
  if ('result' in p) return p.result;
  return safe(() => nodeVerify(p.call.alg, p.call.data, p.call.key as VerifyKeyObjectInput, p.sig));
}

/** As verifyWithKey, with the node:crypto work on libuv's thread pool. */
export async function verifyWithKeyAsync(
  key: TransitKey,
  input: Buffer,
  context: Buffer | undefined,
  signature: string,
  opts: SignatureOptions,
): Promise<boolean> {
  if (KEY_TYPES[key.type].kind === 'pqc') {
    const { version, payload } = parseVersioned(signature, 'signature', key);
    const raw = opts.marshaling === 'jws' ? decodeRawUrlBase64(payload) : decodeStdBase64(payload);
    if (!raw) throw invalid('invalid base64 signature value');
    return pqVerifyAsync(key, liveVersion(key, version), input, raw, {
      prehashed: opts.prehashed,
      hash: opts.hash.name,
    });
  }
  const p = planVerify(key, input, context, signature, opts);
  if ('result' in p) return p.result;
  return new Promise<boolean>((resolve) => {
    try {
      nodeVerify(p.call.alg, p.call.data, p.call.key as VerifyKeyObjectInput, p.sig, (e, ok) => resolve(!e && ok));
    } catch {
      resolve(false);
    }
  });
}

function safe(fn: () => boolean): boolean {
  try {
    return fn();
  } catch {
    return false;
  }
}

/** Digest of `input` with a wire hash (tests and prehashed helpers). */
export function digestOf(alg: HashAlgorithm, input: Buffer): Buffer {
  return createHash(alg.node!).update(input).digest();
}
