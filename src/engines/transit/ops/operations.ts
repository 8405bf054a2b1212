/**
 * The data operations over a mount's key store, one function per endpoint family: lock the key
 * (shared), process every item in order with per-item errors, and return wire-shaped results
 * (reference transit-wire.md section 3.2). Upsert on encrypt creates the key here. No HTTP.
 */
import { randomBytes } from 'node:crypto';
import { invalid } from '../../../framework/errors.js';
import { KEY_TYPES, keyTypeInfo } from '../keyring/key-types.js';
import { checkKeyName } from '../keyring/key-rules.js';
import type { TransitKey, TransitState } from '../keyring/types.js';
import { refuseSoftDeleted } from '../keyring/soft-delete.js';
import { Yielder, itemError, type ItemError } from './batch.js';
import { bool, has, int, itemBase64, str, type BatchItem } from './batch-items.js';
import { checkRewrapPaddings, convergentVersionOf, decryptWithKey, encryptWithKey } from './encryption.js';
import { encryptionVersion, signingVersion } from './key-versions.js';
import { hmacWithKey, verifyHmacWithKey } from './hmac.js';
import type { HashAlgorithm } from './hash-algorithms.js';
import { checkSignatureRequest, signWithKeyAsync, verifyWithKeyAsync, type SignatureOptions } from './signing.js';
import { managedDecrypt, managedEncrypt, managedSign, managedVerify } from './managed-ops.js';

/** Results of a batch: wire-shaped items plus the per-item errors for status rules. */
export interface BatchOutcome {
  results: Record<string, unknown>[];
  errors: (ItemError | undefined)[];
  warnings: string[];
}

/** Item fields of encrypt (reference 3.2.1). */
export const ENCRYPT_ITEM = {
  plaintext: 'string',
  context: 'string',
  nonce: 'string',
  key_version: 'int',
  associated_data: 'string',
  padding_scheme: 'string',
  hash_algorithm: 'string',
  reference: 'string',
  type: 'string',
  convergent_encryption: 'bool',
} as const;
/** Item fields of decrypt. */
export const DECRYPT_ITEM = {
  ciphertext: 'string',
  context: 'string',
  nonce: 'string',
  associated_data: 'string',
  padding_scheme: 'string',
  hash_algorithm: 'string',
  reference: 'string',
} as const;
/** Item fields of rewrap. */
export const REWRAP_ITEM = {
  ciphertext: 'string',
  context: 'string',
  nonce: 'string',
  key_version: 'int',
  decrypt_padding_scheme: 'string',
  encrypt_padding_scheme: 'string',
  hash_algorithm: 'string',
  reference: 'string',
} as const;
/** Item fields of hmac. */
export const HMAC_ITEM = { input: 'string', reference: 'string' } as const;
/** Item fields of sign. */
export const SIGN_ITEM = {
  input: 'string',
  context: 'string',
  reference: 'string',
  signature_context: 'string',
} as const;
/** Item fields of verify. */
export const VERIFY_ITEM = {
  input: 'string',
  context: 'string',
  signature: 'string',
  hmac: 'string',
  cmac: 'string',
  mac_length: 'int',
  reference: 'string',
  signature_context: 'string',
} as const;

const NOT_FOUND = 'encryption key not found';

/** Run `fn` on the key under its shared lock (400 `missing` when absent). */
export async function withKey<T>(
  state: TransitState,
  name: string,
  missing: string,
  fn: (key: TransitKey) => Promise<T>,
): Promise<T> {
  return state.keys.withLock(name, 'shared', async () => {
    const key = state.keys.cached(name) ?? (await state.keys.get(name));
    if (!key) throw invalid(missing);
    refuseSoftDeleted(key);
    return fn(key);
  });
}

/** Process items in order with per-item errors (yielding between items of a batch). */
export function eachItem(
  items: BatchItem[],
  run: (item: BatchItem) => Record<string, unknown>,
  failed: (item: BatchItem, e: ItemError) => Record<string, unknown>,
): Promise<BatchOutcome> {
  if (items.length !== 1) return eachItemYielding(items, run, failed);
  // One item (every non-batch request): no yielding, no extra promise turns.
  const item = items[0]!;
  try {
    return Promise.resolve({ results: [run(item)], errors: [undefined], warnings: [] });
  } catch (e) {
    const err = itemError(e);
    return Promise.resolve({ results: [failed(item, err)], errors: [err], warnings: [] });
  }
}

async function eachItemYielding(
  items: BatchItem[],
  run: (item: BatchItem) => Record<string, unknown>,
  failed: (item: BatchItem, e: ItemError) => Record<string, unknown>,
): Promise<BatchOutcome> {
  const y = new Yielder();
  const results: Record<string, unknown>[] = new Array(items.length);
  const errors: (ItemError | undefined)[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    try {
      results[i] = run(item);
    } catch (e) {
      const err = itemError(e);
      errors[i] = err;
      results[i] = failed(item, err);
    }
    await y.tick();
  }
  return { results, errors, warnings: [] };
}

/** Items in flight at once when the work runs on the thread pool. */
const ASYNC_WINDOW = 32;

/** As eachItem for asynchronous work (signatures on the thread pool): order kept, bounded concurrency. */
async function eachItemAsync(
  items: BatchItem[],
  run: (item: BatchItem) => Promise<Record<string, unknown>>,
  failed: (item: BatchItem, e: ItemError) => Record<string, unknown>,
): Promise<BatchOutcome> {
  if (items.length === 1) {
    // One item (every non-batch request): no window of workers.
    const item = items[0]!;
    try {
      return { results: [await run(item)], errors: [undefined], warnings: [] };
    } catch (e) {
      const err = itemError(e);
      return { results: [failed(item, err)], errors: [err], warnings: [] };
    }
  }
  const results: Record<string, unknown>[] = new Array(items.length);
  const errors: (ItemError | undefined)[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      const item = items[i]!;
      try {
        results[i] = await run(item);
      } catch (e) {
        const err = itemError(e);
        errors[i] = err;
        results[i] = failed(item, err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(ASYNC_WINDOW, items.length) }, worker));
  return { results, errors, warnings: [] };
}

/** An item's `reference` ("" when unset). */
export const ref = (item: BatchItem): string => str(item, 'reference') ?? '';

/** What encrypt's upsert creates when the key is missing. */
export interface UpsertOptions {
  /** The router's operation: `create` when the key was absent and the ACL granted create. */
  operation: string;
  type?: string;
  convergent?: boolean;
}

async function upsertKey(
  state: TransitState,
  name: string,
  items: BatchItem[],
  up: UpsertOptions,
  warnings: string[],
): Promise<void> {
  if (up.operation !== 'create') {
    if (!(await state.keys.get(name))) throw invalid(NOT_FOUND);
    return;
  }
  if (await state.keys.get(name)) {
    warnings.push('Attempted creation of the key during the encrypt operation, but it was created beforehand');
    return;
  }
  if (await state.upsertDisabled()) throw invalid(NOT_FOUND);
  const first = items[0]!;
  const contextSet = (str(first, 'context') ?? '') !== '';
  const typeName = (up.type ?? str(first, 'type') ?? 'aes256-gcm96').toLowerCase();
  const convergent = up.convergent ?? bool(first, 'convergent_encryption') ?? false;
  if (convergent && !contextSet)
    throw invalid('convergent encryption requires derivation to be enabled, so context is required');
  const info = keyTypeInfo(typeName);
  if (!info) throw invalid(`unknown key type ${typeName}`);
  if (!info.encrypt || info.kind === 'managed') throw invalid(`key type ${typeName} not supported for this operation`);
  checkKeyName(name);
  const { created } = await state.keys.create(name, {
    type: info.name,
    derived: contextSet,
    convergentEncryption: convergent,
  });
  if (!created)
    warnings.push('Attempted creation of the key during the encrypt operation, but it was created beforehand');
}

/** encrypt/:name for one or many items (upsert per `up`). */
export async function runEncrypt(
  state: TransitState,
  name: string,
  items: BatchItem[],
  up: UpsertOptions,
): Promise<BatchOutcome> {
  const contextSet = (str(items[0]!, 'context') ?? '') !== '';
  for (const it of items) {
    if (((str(it, 'context') ?? '') !== '') !== contextSet)
      throw invalid('context should be set either in all the request blocks or in none');
  }
  const warnings: string[] = [];
  await upsertKey(state, name, items, up, warnings);
  const out = await withKey(state, name, NOT_FOUND, (key) =>
    key.type === 'managed_key'
      ? eachItemAsync(
          items,
          async (item) => {
            const r = await managedEncrypt(state, key, itemBase64(item, 'plaintext') ?? Buffer.alloc(0), {
              keyVersion: int(item, 'key_version') ?? 0,
              nonce: itemBase64(item, 'nonce'),
              associatedData: itemBase64(item, 'associated_data'),
            });
            return { ciphertext: r.ciphertext, key_version: r.version, reference: ref(item) };
          },
          (item, e) => ({ error: e.message, reference: ref(item) }),
        )
      : eachItem(
          items,
          (item) => {
            const plaintext = itemBase64(item, 'plaintext') ?? Buffer.alloc(0);
            const r = encryptWithKey(key, plaintext, {
              keyVersion: int(item, 'key_version') ?? 0,
              context: itemBase64(item, 'context'),
              nonce: itemBase64(item, 'nonce'),
              associatedData: itemBase64(item, 'associated_data'),
              padding: str(item, 'padding_scheme'),
              oaepHash: str(item, 'hash_algorithm'),
            });
            return { ciphertext: r.ciphertext, key_version: r.version, reference: ref(item) };
          },
          (item, e) => ({ error: e.message, reference: ref(item) }),
        ),
  );
  out.warnings.push(...warnings);
  return out;
}

/** decrypt/:name. */
export async function runDecrypt(state: TransitState, name: string, items: BatchItem[]): Promise<BatchOutcome> {
  return withKey(state, name, NOT_FOUND, (key) =>
    key.type === 'managed_key'
      ? eachItemAsync(
          items,
          async (item) => {
            const r = await managedDecrypt(state, key, str(item, 'ciphertext') ?? '', {
              associatedData: itemBase64(item, 'associated_data'),
            });
            return { plaintext: r.plaintext.toString('base64'), reference: ref(item) };
          },
          (item, e) => ({ plaintext: '', error: e.message, reference: ref(item) }),
        )
      : eachItem(
          items,
          (item) => {
            const r = decryptWithKey(key, str(item, 'ciphertext') ?? '', {
              context: itemBase64(item, 'context'),
              nonce: itemBase64(item, 'nonce'),
              associatedData: itemBase64(item, 'associated_data'),
              padding: str(item, 'padding_scheme'),
              oaepHash: str(item, 'hash_algorithm'),
            });
            return { plaintext: r.plaintext.toString('base64'), reference: ref(item) };
          },
          (item, e) => ({ plaintext: '', error: e.message, reference: ref(item) }),
        ),
  );
}

/** rewrap/:name: decrypt and encrypt again with `key_version` (default latest); plaintext never leaves. */
export async function runRewrap(state: TransitState, name: string, items: BatchItem[]): Promise<BatchOutcome> {
  return withKey(state, name, NOT_FOUND, (key) =>
    key.type === 'managed_key'
      ? eachItemAsync(
          items,
          async (item) => {
            const { plaintext } = await managedDecrypt(state, key, str(item, 'ciphertext') ?? '', {});
            const r = await managedEncrypt(state, key, plaintext, { keyVersion: int(item, 'key_version') ?? 0 });
            plaintext.fill(0);
            return { ciphertext: r.ciphertext, key_version: r.version, reference: ref(item) };
          },
          (item, e) => ({ error: e.message, reference: ref(item) }),
        )
      : eachItem(
          items,
          (item) => {
            const context = itemBase64(item, 'context');
            const nonce = itemBase64(item, 'nonce');
            const decryptPadding = str(item, 'decrypt_padding_scheme');
            // From PKCS#1 v1.5, the new ciphertext is PKCS#1 v1.5 too unless the caller names a scheme
            // (Vault defaults it to OAEP, which could fail by length and so leak the padding's validity).
            const givenPadding = str(item, 'encrypt_padding_scheme') || undefined;
            const encryptPadding =
              givenPadding ?? (decryptPadding === 'pkcs1v15' && KEY_TYPES[key.type].rsaBits ? 'pkcs1v15' : undefined);
            checkRewrapPaddings(key, decryptPadding, encryptPadding);
            // Implicit rejection: an invalid PKCS#1 v1.5 padding rewraps its synthetic message, answering
            // exactly as a valid one would (the caller may hold only rewrap: no padding oracle).
            const oaepHash = str(item, 'hash_algorithm');
            const { plaintext } = decryptWithKey(key, str(item, 'ciphertext') ?? '', {
              context,
              nonce,
              padding: decryptPadding,
              oaepHash,
              implicitRejection: true,
            });
            const target = encryptionVersion(key, int(item, 'key_version') ?? 0);
            const r = encryptWithKey(key, plaintext, {
              keyVersion: target,
              context,
              nonce: convergentVersionOf(key, target) === 1 ? nonce : undefined,
              padding: encryptPadding,
              oaepHash,
            });
            plaintext.fill(0);
            return { ciphertext: r.ciphertext, key_version: r.version, reference: ref(item) };
          },
          (item, e) => ({ error: e.message, reference: ref(item) }),
        ),
  );
}

/** Options of datakey/:type/:name. */
export interface DatakeyOptions {
  bits: number;
  context?: Buffer;
  nonce?: Buffer;
  keyVersion: number;
  padding?: string;
  includePlaintext: boolean;
}

/** datakey: fresh random bits, returned wrapped (and in plaintext on the plaintext path). */
export async function runDatakey(
  state: TransitState,
  name: string,
  o: DatakeyOptions,
): Promise<Record<string, unknown>> {
  if (o.bits !== 128 && o.bits !== 256 && o.bits !== 512) throw invalid('invalid bit length');
  return withKey(state, name, NOT_FOUND, async (key) => {
    const dk = randomBytes(o.bits / 8);
    // A managed key wraps the data key inside the HSM/KMS (reference 2.4, datakey row).
    const r =
      key.type === 'managed_key'
        ? await managedEncrypt(state, key, dk, { keyVersion: o.keyVersion, nonce: o.nonce })
        : encryptWithKey(key, dk, { keyVersion: o.keyVersion, context: o.context, nonce: o.nonce, padding: o.padding });
    const data: Record<string, unknown> = { ciphertext: r.ciphertext, key_version: r.version };
    if (o.includePlaintext) data.plaintext = dk.toString('base64');
    dk.fill(0);
    return data;
  });
}

/** hmac/:name for one or many items. */
export async function runHmac(
  state: TransitState,
  name: string,
  items: BatchItem[],
  alg: HashAlgorithm,
  keyVersion: number,
  batch: boolean,
): Promise<BatchOutcome> {
  return withKey(state, name, NOT_FOUND, async (key) => {
    if (!batch && !has(items[0]!, 'input')) throw invalid('missing input for HMAC');
    return eachItem(
      items,
      (item) => {
        if (!has(item, 'input')) throw invalid('missing input for HMAC');
        const input = decodeInput(item);
        return { hmac: hmacWithKey(key, alg, input, keyVersion), reference: ref(item) };
      },
      (item, e) => ({ error: e.message, reference: ref(item) }),
    );
  });
}

/** An item's base64 `input` (Vault's message when malformed). */
export function decodeInput(item: BatchItem): Buffer {
  try {
    return itemBase64(item, 'input') ?? Buffer.alloc(0);
  } catch {
    throw invalid('unable to decode input as base64: illegal base64 data');
  }
}

function decodeContext(item: BatchItem): Buffer | undefined {
  try {
    return itemBase64(item, 'context');
  } catch {
    throw invalid('failed to base64-decode context');
  }
}

/** sign/:name for one or many items. */
export async function runSign(
  state: TransitState,
  name: string,
  items: BatchItem[],
  opts: SignatureOptions,
  explicitHash: boolean,
  keyVersion: number,
): Promise<BatchOutcome> {
  return withKey(state, name, 'signing key not found', async (key) => {
    if (key.type === 'managed_key') {
      const ver = signingVersion(key, keyVersion);
      return eachItemAsync(
        items,
        async (item) => {
          if (!has(item, 'input')) throw invalid('missing input');
          return {
            signature: await managedSign(state, key, ver, decodeInput(item), opts),
            key_version: ver,
            reference: ref(item),
          };
        },
        (item, e) => ({ key_version: 0, error: e.message, reference: ref(item) }),
      );
    }
    checkSignatureRequest(key, opts, explicitHash);
    const ver = signingVersion(key, keyVersion);
    return eachItemAsync(
      items,
      async (item) => {
        if (!has(item, 'input')) throw invalid('missing input');
        if (str(item, 'signature_context'))
          throw invalid('only Pure Ed25519 signatures supported, signature_context must be empty');
        const r = await signWithKeyAsync(key, ver, decodeInput(item), decodeContext(item), opts);
        const out: Record<string, unknown> = { signature: r.signature, key_version: ver };
        if (r.publicKey) out.publickey = r.publicKey.toString('base64');
        out.reference = ref(item);
        return out;
      },
      (item, e) => ({ key_version: 0, error: e.message, reference: ref(item) }),
    );
  });
}

/** Which verify branch a request takes (reference 3.2.9 dispatch rules; `cmac` as Vault Enterprise). */
export function verifyBranch(items: BatchItem[], batch: boolean): 'signature' | 'hmac' | 'cmac' {
  const kinds = ['signature', 'hmac', 'cmac'] as const;
  const seen = new Set<(typeof kinds)[number]>();
  let missing = false;
  for (const it of items) {
    const k = kinds.find((n) => has(it, n));
    if (k) seen.add(k);
    else missing = true;
  }
  if (!batch && kinds.filter((n) => has(items[0]!, n)).length > 1)
    throw invalid("provide one of 'signature', 'hmac' or 'cmac'");
  if (!batch && seen.size === 0) throw invalid("missing one of 'signature', 'hmac' or 'cmac' arguments to verify");
  if (seen.size > 1) throw invalid("elements of batch_input must all provide either 'signature', 'hmac' or 'cmac'");
  const [only] = [...seen];
  if (missing && only) throw invalid(`some elements of batch_input are missing '${only}'`);
  if (!only) throw invalid("no batch_input elements have 'signature', 'hmac' or 'cmac'");
  return only;
}

/** verify/:name, signature branch. */
export async function runVerifySignature(
  state: TransitState,
  name: string,
  items: BatchItem[],
  opts: SignatureOptions,
  explicitHash: boolean,
): Promise<BatchOutcome> {
  return withKey(state, name, 'signature verification key not found', async (key) => {
    if (key.type === 'managed_key') {
      return eachItemAsync(
        items,
        async (item) => {
          if (!has(item, 'input')) throw invalid('missing input');
          if (!has(item, 'signature')) throw invalid('missing signature');
          return {
            valid: await managedVerify(state, key, decodeInput(item), str(item, 'signature') ?? '', opts),
            reference: ref(item),
          };
        },
        (item, e) => ({ valid: false, error: e.message, reference: ref(item) }),
      );
    }
    if (!KEY_TYPES[key.type].sign) throw invalid(`key type ${key.type} does not support verification`);
    checkSignatureRequest(key, opts, explicitHash);
    return eachItemAsync(
      items,
      async (item) => {
        if (!has(item, 'input')) throw invalid('missing input');
        if (!has(item, 'signature')) throw invalid('missing signature');
        if (str(item, 'signature_context'))
          throw invalid('only Pure Ed25519 signatures supported, signature_context must be empty');
        const valid = await verifyWithKeyAsync(
          key,
          decodeInput(item),
          decodeContext(item),
          str(item, 'signature') ?? '',
          opts,
        );
        return { valid, reference: ref(item) };
      },
      (item, e) => ({ valid: false, error: e.message, reference: ref(item) }),
    );
  });
}

/** verify/:name, HMAC branch (`valid` omitted when false in batch items, as Vault does). */
export async function runVerifyHmac(
  state: TransitState,
  name: string,
  items: BatchItem[],
  alg: HashAlgorithm,
): Promise<BatchOutcome> {
  return withKey(state, name, NOT_FOUND, async (key) =>
    eachItem(
      items,
      (item) => {
        if (!has(item, 'input')) throw invalid('missing input');
        if (!has(item, 'hmac')) throw invalid('missing hmac');
        const valid = verifyHmacWithKey(key, alg, decodeInput(item), str(item, 'hmac') ?? '');
        return valid ? { valid, reference: ref(item) } : { reference: ref(item) };
      },
      (item, e) => ({ error: e.message, reference: ref(item) }),
    ),
  );
}
