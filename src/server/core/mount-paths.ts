/** Mount paths, accessors and where a mount's records live behind the barrier. */
import { randomBytes } from 'node:crypto';
import { invalid } from '../../framework/errors.js';
import type { MountInfo } from '../../framework/context.js';

/** Storage prefixes of the internal mounts (sys/ itself keeps policies and tokens under sys/). */
export const INTERNAL_PREFIX: Record<string, string> = {
  'sys/': 'sys/',
  'auth/token/': 'sys/token-engine/',
  'sys/sync/': 'sys/sync/',
  'cubbyhole/': 'sys/cubbyhole/',
  'identity/': 'sys/identity-engine/',
  'identity/mfa/': 'sys/mfa/',
  'sys/mfa/': 'sys/mfa/',
};

/** Where a mount's records live behind the barrier. */
export function storagePrefixOf(m: { mount: MountInfo; internal: boolean }): string {
  return m.internal ? INTERNAL_PREFIX[m.mount.path]! : `logical/${m.mount.uuid}/`;
}

/** A fresh accessor (`transit_1a2b3c4d`). */
export function accessorFor(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString('hex')}`;
}

/** "transit" / "/transit/" -> "transit/". */
export function normalizeMountPath(p: string): string {
  const s = p.replace(/^\/+/, '').replace(/\/+$/, '');
  if (s === '' || s.includes('..') || !/^[\w.\-/]+$/.test(s)) throw invalid('path', `invalid mount path "${p}"`);
  return s + '/';
}
