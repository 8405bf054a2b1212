/**
 * Secret paths are kept off the disk in clear: each path segment becomes a deterministic, authenticated
 * ciphertext (synthetic IV: HMAC-SHA256 of parent path and segment, truncated to 16 bytes, then AES-256-CTR
 * under that IV), base64url-encoded. Deterministic so a path maps to one storage key and folders can be
 * listed; keyed by the parent path so equal names in different folders do not look equal.
 * Vault's KV v2 likewise encrypts key names in storage (keysutil.EncryptedKeyStorageWrapper).
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Paths whose encrypted form a PathCipher remembers. */
const PATH_MEMO_SIZE = 10_000;

/** Longest segment (UTF-8 bytes) whose encrypted name still fits a 255-byte file name. */
export const MAX_SEGMENT_BYTES = 160;

/** Encrypts and decrypts path segments and derives opaque ids for a mount. */
export class PathCipher {
  private readonly encKey: Buffer;
  private readonly macKey: Buffer;
  /** Recent results of encryptPath (deterministic, so never stale): an HMAC and an AES call per segment otherwise. */
  private readonly paths = new Map<string, string>();

  /** `secret` is the mount's 32-byte name key (kept in barrier-encrypted storage). */
  constructor(secret: Buffer) {
    this.encKey = createHmac('sha256', secret).update('keyhold kv name encryption').digest();
    this.macKey = createHmac('sha256', secret).update('keyhold kv name authentication').digest();
  }

  private iv(parent: string, segment: Buffer): Buffer {
    return createHmac('sha256', this.macKey)
      .update(parent, 'utf8')
      .update(Buffer.from([0]))
      .update(segment)
      .digest()
      .subarray(0, 16);
  }

  /** Encrypted name of `segment` inside folder `parent` ("" at the root, else "a/b"). */
  encryptSegment(parent: string, segment: string): string {
    const pt = Buffer.from(segment, 'utf8');
    const iv = this.iv(parent, pt);
    const c = createCipheriv('aes-256-ctr', this.encKey, iv);
    return Buffer.concat([iv, c.update(pt), c.final()]).toString('base64url');
  }

  /** Plain segment of an encrypted name inside `parent`; null when the name is not ours or was altered. */
  decryptSegment(parent: string, name: string): string | null {
    const raw = Buffer.from(name, 'base64url');
    if (raw.length < 17 || raw.toString('base64url') !== name) return null;
    const iv = raw.subarray(0, 16);
    const d = createDecipheriv('aes-256-ctr', this.encKey, iv);
    const pt = Buffer.concat([d.update(raw.subarray(16)), d.final()]);
    return timingSafeEqual(this.iv(parent, pt), iv) ? pt.toString('utf8') : null;
  }

  /** Storage key (relative) of a path: its segments encrypted one by one. */
  encryptPath(path: string): string {
    let out = this.paths.get(path);
    if (out === undefined) {
      const segs = path.split('/');
      out = segs.map((s, i) => this.encryptSegment(segs.slice(0, i).join('/'), s)).join('/');
      if (this.paths.size >= PATH_MEMO_SIZE) this.paths.clear();
      this.paths.set(path, out);
    }
    return out;
  }

  /** An opaque, stable id of a path (names the folder of its version records). */
  idOf(path: string): string {
    return createHmac('sha256', this.macKey).update('version-id\0').update(path, 'utf8').digest('hex').slice(0, 40);
  }
}

/** Where a KV mount keeps its path-name key (behind the barrier, in the mount's own storage). */
const NAME_KEY = 'namekey';

/** The mount's path cipher: its stored name key, created at first use (both KV versions share the record). */
export async function loadPathCipher(storage: {
  get(key: string): Promise<Buffer | null>;
  put(key: string, value: Buffer): Promise<void>;
}): Promise<PathCipher> {
  let key = await storage.get(NAME_KEY);
  if (!key) {
    key = randomBytes(32);
    await storage.put(NAME_KEY, key);
  }
  return new PathCipher(key);
}
