/**
 * Data-operation routes of the transit engine (spec 4.2; reference transit-wire.md 3.2 and 3.4):
 * encrypt, decrypt, rewrap, datakey, random, hash, hmac, sign, verify. Handlers are thin: read the
 * fields, call ops/operations.ts, shape the reply (batch statuses per spec section 7 items 1-3).
 */
import { f, decodeBase64 } from '../../../framework/fields.js';
import { internal, invalid, unavailable } from '../../../framework/errors.js';
import { routesFor, type AnyRoute, type Reply } from '../../../framework/route.js';
import type { TransitState } from '../keyring/types.js';
import { batchStatus } from '../ops/batch.js';
import { readBatchItems, type BatchItem, type ItemFieldKind } from '../ops/batch-items.js';
import { hashInput } from '../ops/hashing.js';
import { hmacAlgorithm } from '../ops/hmac.js';
import { randomOutput, resolveRandomPath } from '../ops/random-bytes.js';
import { parseHashAlgorithm, parseMarshaling, parseSaltLength, type SignatureOptions } from '../ops/signing.js';
import {
  DECRYPT_ITEM,
  ENCRYPT_ITEM,
  HMAC_ITEM,
  REWRAP_ITEM,
  SIGN_ITEM,
  VERIFY_ITEM,
  runDatakey,
  runDecrypt,
  runEncrypt,
  runHmac,
  runRewrap,
  runSign,
  runVerifyHmac,
  runVerifySignature,
  verifyBranch,
  type BatchOutcome,
} from '../ops/operations.js';
import { runVerifyCmac } from '../ops/cmac-operations.js';

const route = routesFor<TransitState>();

const name = f.name('Name of the key');
const b64 = (help: string) => f.string(`${help} (base64)`);
const batchInput = f.list('Items to process in one request; results keep the input order');
const reference = f.string('Echoed in the matching batch_results item');
const partialCode = f.int('HTTP status for a batch where some items failed (default 400)');

/** One request's top-level fields as a single batch item. */
function single(data: Record<string, unknown>, kinds: Readonly<Record<string, ItemFieldKind>>): BatchItem[] {
  const obj: Record<string, unknown> = {};
  for (const k of Object.keys(kinds))
    if (data[k] !== undefined) obj[k] = Buffer.isBuffer(data[k]) ? (data[k] as Buffer).toString('base64') : data[k];
  return readBatchItems([obj], kinds);
}

function items(
  data: Record<string, unknown>,
  kinds: Readonly<Record<string, ItemFieldKind>>,
): { list: BatchItem[]; batch: boolean } {
  const raw = data.batch_input as unknown[] | undefined;
  return raw !== undefined
    ? { list: readBatchItems(raw, kinds), batch: true }
    : { list: single(data, kinds), batch: false };
}

/** Reply for a batch; `statusRules` applies spec 7.1 (encrypt/decrypt/rewrap), else always 200 (7.2). */
function batchReply(out: BatchOutcome, statusRules: boolean, override?: number): Reply {
  const s = statusRules ? batchStatus(out.errors, override) : { status: 200, warnings: [] };
  const warnings = [...out.warnings, ...s.warnings];
  return {
    data: { batch_results: out.results },
    status: s.status === 200 ? undefined : s.status,
    warnings: warnings.length ? warnings : undefined,
  };
}

/** Reply for a single item: its error becomes the request's error. */
function singleReply(out: BatchOutcome, shape: (r: Record<string, unknown>) => Record<string, unknown>): Reply {
  const e = out.errors[0];
  if (e) throw e.user ? invalid(e.message) : e.unavailable ? unavailable(e.message) : internal(e.message);
  return { data: shape(out.results[0]!), warnings: out.warnings.length ? out.warnings : undefined };
}

/** `r` without `drop`, built by copying (a `delete` would turn the object into a slow dictionary). */
function strip(r: Record<string, unknown>, drop: string): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const k in r) if (k !== drop) o[k] = r[k];
  return o;
}

const signatureFields = {
  urlalgorithm: f.string('Hash algorithm in the URL (wins over hash_algorithm)'),
  hash_algorithm: f.string(
    'sha2-256 (default), sha2-224/384/512, sha3-224/256/384/512, sha1, none (RSA pkcs1v15 + prehashed)',
  ),
  algorithm: f.string('Deprecated name of hash_algorithm'),
  input: b64('Data to sign or verify').sensitive(),
  context: b64('Context for derived Ed25519 keys'),
  prehashed: f.bool('Input is already a digest (raw bytes, base64)').default(false),
  signature_algorithm: f.string('RSA: pss (default) or pkcs1v15').default('pss'),
  marshaling_algorithm: f.string('ECDSA: asn1 (default) or jws').default('asn1'),
  salt_length: f.string('RSA PSS salt: auto (default), hash, or a number of bytes').default('auto'),
  signature_context: b64('Ed25519ctx context (not supported; must be empty)'),
  reference,
  batch_input: batchInput,
};

function signatureOptions(data: {
  urlalgorithm?: string;
  hash_algorithm?: string;
  algorithm?: string;
  prehashed: boolean;
  signature_algorithm: string;
  marshaling_algorithm: string;
  salt_length: string;
}): { opts: SignatureOptions; explicit: boolean } {
  const explicit = data.urlalgorithm || data.hash_algorithm || data.algorithm;
  const hash = parseHashAlgorithm(explicit || 'sha2-256');
  const marshaling = parseMarshaling(data.marshaling_algorithm);
  const saltLength = parseSaltLength(data.salt_length);
  return {
    opts: { hash, prehashed: data.prehashed, signatureAlgorithm: data.signature_algorithm, marshaling, saltLength },
    explicit: Boolean(explicit),
  };
}

/** Routes: encrypt, decrypt, rewrap, datakey, random, hash, hmac, sign, verify. */
export const dataRoutes: AnyRoute[] = [
  route({
    path: 'encrypt/:name',
    standby: 'serve', // a cluster standby computes this itself (issue 13)
    summary: 'Encrypt base64 plaintext with a named key (creates a missing key when the token may create)',
    fields: {
      name,
      plaintext: b64('Data to encrypt').sensitive(),
      associated_data: b64('Additional authenticated data (AEAD key types)'),
      context: b64('Key-derivation context (required for derived keys)'),
      key_version: f.int('Key version to use; 0 means latest').default(0),
      nonce: b64('Nonce, only for convergent keys from Vault 0.6.1 (12 bytes)'),
      padding_scheme: f.string('RSA keys: oaep (default) or pkcs1v15'),
      hash_algorithm: f.string('RSA-OAEP hash: sha2-256 (default), sha1, sha2-224/384/512, sha3-224/256/384/512'),
      reference,
      batch_input: batchInput,
      type: f.string('Key type when the key is created by this request').default('aes256-gcm96'),
      convergent_encryption: f.bool('Convergent encryption when the key is created by this request'),
      partial_failure_response_code: partialCode,
    },
    exists: ({ engine, data }) =>
      engine.keys.cached(data.name) !== undefined || engine.keys.get(data.name).then((k) => k !== null),
    operations: {
      update: async ({ engine, data, raw, operation }) => {
        if (data.batch_input === undefined && data.plaintext === undefined)
          throw invalid('missing plaintext to encrypt');
        const { list, batch } = items(data, ENCRYPT_ITEM);
        const out = await runEncrypt(engine, data.name, list, {
          operation,
          type: raw.type !== undefined ? data.type : undefined,
          convergent: data.convergent_encryption,
        });
        return batch
          ? batchReply(out, true, data.partial_failure_response_code)
          : singleReply(out, (r) => strip(r, 'reference'));
      },
    },
  }),
  route({
    path: 'decrypt/:name',
    standby: 'serve', // a cluster standby computes this itself (issue 13)
    summary: 'Decrypt a vault:vN: ciphertext; the plaintext comes back base64-encoded',
    fields: {
      name,
      ciphertext: f.string('Ciphertext to decrypt (vault:vN:...)'),
      associated_data: b64('Additional authenticated data given at encryption'),
      context: b64('Key-derivation context (required for derived keys)'),
      nonce: b64('Nonce, only for convergent keys from Vault 0.6.1'),
      padding_scheme: f.string('RSA keys: oaep (default) or pkcs1v15'),
      hash_algorithm: f.string('RSA-OAEP hash: sha2-256 (default), sha1, sha2-224/384/512, sha3-224/256/384/512'),
      reference,
      batch_input: batchInput,
      partial_failure_response_code: partialCode,
    },
    operations: {
      update: async ({ engine, data }) => {
        if (data.batch_input === undefined && !data.ciphertext) throw invalid('missing ciphertext to decrypt');
        if (data.batch_input !== undefined) {
          (data.batch_input as unknown[]).forEach((it, i) => {
            if (it && typeof it === 'object' && typeof (it as Record<string, unknown>).ciphertext !== 'string') {
              throw invalid(`failed to parse batch input: '[${i}].ciphertext' missing ciphertext to decrypt`);
            }
          });
        }
        const { list, batch } = items(data, DECRYPT_ITEM);
        const out = await runDecrypt(engine, data.name, list);
        return batch
          ? batchReply(out, true, data.partial_failure_response_code)
          : singleReply(out, (r) => strip(r, 'reference'));
      },
    },
  }),
  route({
    path: 'rewrap/:name',
    standby: 'serve', // a cluster standby computes this itself (issue 13)
    summary: 'Re-encrypt a ciphertext with the latest (or given) key version without returning plaintext',
    fields: {
      name,
      ciphertext: f.string('Ciphertext to rewrap'),
      context: b64('Key-derivation context (required for derived keys)'),
      nonce: b64('Nonce, only for convergent keys from Vault 0.6.1'),
      key_version: f.int('Key version to encrypt with; 0 means latest').default(0),
      decrypt_padding_scheme: f.string('RSA keys: padding of the given ciphertext'),
      encrypt_padding_scheme: f.string('RSA keys: padding of the new ciphertext'),
      hash_algorithm: f.string('RSA-OAEP hash of both the given and the new ciphertext (default sha2-256)'),
      reference,
      batch_input: batchInput,
      partial_failure_response_code: partialCode,
    },
    operations: {
      update: async ({ engine, data }) => {
        if (data.batch_input === undefined && !data.ciphertext) throw invalid('missing ciphertext to rewrap');
        const { list, batch } = items(data, REWRAP_ITEM);
        const out = await runRewrap(engine, data.name, list);
        return batch
          ? batchReply(out, true, data.partial_failure_response_code)
          : singleReply(out, (r) => strip(r, 'reference'));
      },
    },
  }),
  route({
    path: 'datakey/:plaintext/:name',
    standby: 'serve', // a cluster standby computes this itself (issue 13)
    summary: 'Generate a data key: wrapped only, or wrapped and in plaintext',
    fields: {
      name,
      plaintext: f.string('"plaintext" (return the key too) or "wrapped" (ciphertext only)').required(),
      context: b64('Key-derivation context (required for derived keys)'),
      nonce: b64('Nonce, only for convergent keys from Vault 0.6.1'),
      bits: f.int('Data key size in bits: 128, 256 (default) or 512').default(256),
      key_version: f.int('Key version to wrap with; 0 means latest').default(0),
      padding_scheme: f.string('RSA keys: oaep (default) or pkcs1v15'),
    },
    operations: {
      update: async ({ engine, data }) => {
        if (data.plaintext !== 'plaintext' && data.plaintext !== 'wrapped')
          throw invalid("Invalid path, must be 'plaintext' or 'wrapped'");
        let context: Buffer | undefined;
        try {
          context = data.context ? decodeBase64('context', data.context) : undefined;
        } catch {
          throw invalid('failed to base64-decode context');
        }
        let nonce: Buffer | undefined;
        try {
          nonce = data.nonce ? decodeBase64('nonce', data.nonce) : undefined;
        } catch {
          throw invalid('failed to base64-decode nonce');
        }
        const out = await runDatakey(engine, data.name, {
          bits: data.bits,
          context,
          nonce,
          keyVersion: data.key_version,
          padding: data.padding_scheme,
          includePlaintext: data.plaintext === 'plaintext',
        });
        return { data: out };
      },
    },
  }),
  route({
    path: 'random(/:urlsource)(/:urlbytes)',
    standby: 'serve', // a cluster standby computes this itself (issue 13)
    summary: 'Random bytes from the platform RNG',
    fields: {
      urlsource: f.string('Source or byte count in the URL'),
      urlbytes: f.string('Byte count in the URL'),
      bytes: f.int('Number of bytes (1-131072, default 32)').default(32),
      format: f.string('base64 (default) or hex').default('base64'),
      source: f.string('platform (default) or all; seal is not available').default('platform'),
    },
    operations: {
      update: ({ data }) => {
        const fromUrl = resolveRandomPath(data.urlsource, data.urlbytes);
        return {
          data: { random_bytes: randomOutput(fromUrl.bytes ?? data.bytes, data.format, fromUrl.source ?? data.source) },
        };
      },
    },
  }),
  route({
    path: 'hash(/:urlalgorithm)',
    standby: 'serve', // a cluster standby computes this itself (issue 13)
    summary: 'Hash base64 input (sha2 and sha3 families)',
    fields: {
      urlalgorithm: f.string('Algorithm in the URL (wins over algorithm)'),
      algorithm: f.string('sha2-256 (default), sha2-224/384/512, sha3-224/256/384/512').default('sha2-256'),
      input: b64('Data to hash').sensitive(),
      format: f.string('hex (default) or base64').default('hex'),
    },
    operations: {
      update: ({ data }) => {
        if (data.input === undefined) throw invalid('input missing');
        let input: Buffer;
        try {
          input = decodeBase64('input', data.input);
        } catch {
          throw invalid('unable to decode input as base64: illegal base64 data');
        }
        return { data: { sum: hashInput(data.urlalgorithm || data.algorithm, input, data.format) } };
      },
    },
  }),
  route({
    path: 'hmac/:name(/:urlalgorithm)',
    standby: 'serve', // a cluster standby computes this itself (issue 13)
    summary: "HMAC of base64 input with a key version's HMAC key",
    fields: {
      name,
      urlalgorithm: f.string('Algorithm in the URL (wins over algorithm)'),
      algorithm: f.string('sha2-256 (default), sha2-224/384/512, sha3-*, sha1').default('sha2-256'),
      input: b64('Data to authenticate').sensitive(),
      key_version: f.int('Key version; 0 means latest').default(0),
      reference,
      batch_input: batchInput,
    },
    operations: {
      update: async ({ engine, data }) => {
        const alg = hmacAlgorithm(data.urlalgorithm || data.algorithm);
        const { list, batch } = items(data, HMAC_ITEM);
        const out = await runHmac(engine, data.name, list, alg, data.key_version, batch);
        return batch ? batchReply(out, false) : singleReply(out, (r) => strip(r, 'reference'));
      },
    },
  }),
  route({
    path: 'sign/:name(/:urlalgorithm)',
    standby: 'serve', // a cluster standby computes this itself (issue 13)
    summary: 'Sign base64 input with an asymmetric key',
    fields: { name, key_version: f.int('Key version; 0 means latest').default(0), ...signatureFields },
    operations: {
      update: async ({ engine, data }) => {
        const { opts, explicit } = signatureOptions(data);
        const { list, batch } = items(data, SIGN_ITEM);
        if (!batch && list[0]!.fields.input === undefined) list[0]!.fields.input = '';
        const out = await runSign(engine, data.name, list, opts, explicit, data.key_version);
        if (batch) return batchReply(out, false);
        return singleReply(out, (r) => {
          const o: Record<string, unknown> = { signature: r.signature, key_version: r.key_version };
          if (r.publickey) o.public_key = r.publickey;
          return o;
        });
      },
    },
  }),
  route({
    path: 'verify/:name(/:urlalgorithm)',
    standby: 'serve', // a cluster standby computes this itself (issue 13)
    summary: 'Verify a signature or an HMAC of base64 input',
    fields: {
      name,
      ...signatureFields,
      signature: f.string('Signature to check (vault:vN:...)'),
      hmac: f.string('HMAC to check (vault:vN:...)'),
      cmac: f.string('CMAC to check (vault:vN:...), aes*-cmac keys'),
      mac_length: f.int('CMAC length in bytes used at generation (0 = the length of the given value)').default(0),
    },
    operations: {
      update: async ({ engine, data }) => {
        const { list, batch } = items(data, VERIFY_ITEM);
        if (!batch && list[0]!.fields.input === undefined) list[0]!.fields.input = '';
        const branch = verifyBranch(list, batch);
        let out: BatchOutcome;
        if (branch === 'cmac') {
          out = await runVerifyCmac(engine, data.name, list, data.mac_length);
        } else if (branch === 'hmac') {
          const alg = hmacAlgorithm(data.urlalgorithm || data.hash_algorithm || data.algorithm || 'sha2-256');
          out = await runVerifyHmac(engine, data.name, list, alg);
        } else {
          const { opts, explicit } = signatureOptions(data);
          out = await runVerifySignature(engine, data.name, list, opts, explicit);
        }
        if (batch) return batchReply(out, false);
        return singleReply(out, (r) => ({ valid: r.valid === true }));
      },
    },
  }),
];
