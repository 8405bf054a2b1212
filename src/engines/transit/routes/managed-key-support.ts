/**
 * Route helpers for transit keys of type `managed_key` (reference managed-keys-wire.md 2.1-2.3):
 * resolving `managed_key_name`/`managed_key_id` for this mount, the read view (versions with their
 * managed key and, for RSA/EC keys, the public key read from the HSM/KMS), and releasing the usage
 * records when the transit key is deleted.
 */
import { invalid } from '../../../framework/errors.js';
import type { TransitEngine } from '../transit-engine.js';
import { formatGoTime } from '../keyring/go-time.js';
import { keyView } from '../keyring/key-view.js';
import { publicPem } from '../keyring/material.js';
import type { TransitKey } from '../keyring/types.js';

/** The UUID named by the request (400 when absent, unknown or not allowed on this mount). */
export async function managedKeyId(
  engine: TransitEngine,
  data: { managed_key_name?: string; managed_key_id?: string; managed_key?: string },
): Promise<string> {
  if (!engine.managed) throw invalid('type', 'managed keys are not available on this server');
  const name = data.managed_key_name || data.managed_key;
  if (!name && !data.managed_key_id)
    throw invalid('managed_key_name', 'managed_key_name or managed_key_id is required for keys of type managed_key');
  return engine.managed.resolve({ name: name || undefined, id: data.managed_key_id || undefined });
}

/**
 * The read view of a managed key: Vault's envelope (type managed_key, supports_* from the type table)
 * plus, per live version, its creation time, managed key (id and name) and public key when the key
 * is asymmetric. A backend that cannot be reached leaves `public_key` empty rather than failing the read.
 */
export async function managedView(engine: TransitEngine, key: TransitKey): Promise<Record<string, unknown>> {
  const d = keyView(key);
  const keys: Record<string, unknown> = {};
  for (let n = Math.max(1, key.minDecryptionVersion); n <= key.latestVersion; n++) {
    const v = key.versions.get(n);
    if (!v?.managedKeyId) continue;
    let publicKey = '';
    let kind = '';
    try {
      const k = await engine.managed!.key(v.managedKeyId);
      kind = k.kind;
      const pub = k.publicKey();
      if (pub) publicKey = publicPem(pub);
    } catch {
      /* backend unavailable: shown without a public key */
    }
    keys[String(n)] = {
      creation_time: formatGoTime(v.creationTime),
      managed_key_id: v.managedKeyId,
      managed_key_name: await engine.managed!.nameOf(v.managedKeyId),
      key_kind: kind,
      public_key: publicKey,
    };
  }
  d.keys = keys;
  return d;
}

/** Forget the usage records of a deleted transit key. */
export async function releaseManaged(engine: TransitEngine, key: TransitKey): Promise<void> {
  const ids = new Set([...key.versions.values()].map((v) => v.managedKeyId).filter((x): x is string => Boolean(x)));
  for (const id of ids) await engine.managed?.unmarkUsed(id, key.name);
}
