/**
 * What an entry's last successful write put at the provider, so an attempt can skip an entry that
 * is already in place: a retry cut off by a rate limit then resumes where the previous attempt
 * stopped instead of writing every key again from the first (which, with fewer requests per
 * rate-limit window than the link has keys, would never reach the last ones).
 *
 * The mark holds no secret: the value is identified by an HMAC-SHA-256 (truncated to 128 bits)
 * under a random key stored behind the barrier with the rest of sync state (store.ts), computed
 * over the link, the entry's sub-key, the external name and the value. With the link's generation
 * (bumped by every `associations/set`, which re-pushes on purpose) and the destination's revision
 * (bumped by every change of it), a mark that matches means "this very value was written under
 * this very name, by this association, to the destination as it is configured now".
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { EntryState, WrittenMark } from './types.js';

/** The keyed hash of one entry's value (base64url, 22 characters). */
export function valueMac(key: Buffer, linkKey: string, sub: string, externalName: string, value: string): string {
  const h = createHmac('sha256', key);
  // Length-prefixed fields: no two different tuples hash the same input.
  for (const part of [linkKey, sub, externalName, value]) {
    const b = Buffer.from(part, 'utf8');
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    h.update(len).update(b);
  }
  return h.digest().subarray(0, 16).toString('base64url');
}

/** Whether `old` records that `mark` is already at the provider under `externalName`. */
export function alreadyWritten(old: EntryState | undefined, externalName: string, mark: WrittenMark): boolean {
  const w = old?.written;
  return (
    !!w &&
    old.present &&
    old.external_name === externalName &&
    w.generation === mark.generation &&
    w.revision === mark.revision &&
    sameMac(w.mac, mark.mac)
  );
}

/** The two keyed hashes of a value are equal, compared in constant time (they derive from the secret). */
function sameMac(a: string, b: string): boolean {
  const x = Buffer.from(a, 'base64url');
  const y = Buffer.from(b, 'base64url');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** `st` without its mark: after a failed call the provider's state of the entry is unknown. */
export function unmarked(st: EntryState): EntryState {
  if (!st.written) return st;
  const { written: _gone, ...rest } = st;
  return rest;
}
