/**
 * Password hashes for the userpass method: bcrypt (Vault's builtin/credential/userpass stores
 * golang.org/x/crypto/bcrypt hashes at DefaultCost 10), from the `bcryptjs` package (pure JS, no
 * native build, async API that yields to the event loop between rounds). Hashes are the standard
 * `$2a$`/`$2b$` strings, so a hash Vault wrote (`password_hash`) verifies here and the other way round.
 */
import bcrypt from 'bcryptjs';
import { invalid } from '../framework/errors.js';

/** Vault's bcrypt cost (golang.org/x/crypto/bcrypt DefaultCost). */
export const BCRYPT_COST = 10;

/** bcrypt reads at most 72 bytes of a password; Go's bcrypt refuses longer ones, and so do we. */
export const MAX_PASSWORD_BYTES = 72;

const HASH_RE = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;

/** A new bcrypt hash of `password` (400 naming "password" when it is empty or too long). */
export async function hashPassword(password: string, cost = BCRYPT_COST): Promise<string> {
  checkPassword(password);
  return bcrypt.hash(password, cost);
}

/** Whether `password` matches `hash` (bcrypt's own comparison, which takes the same time for any mismatch). */
export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return bcrypt.compare(password, hash);
}

/** Throws when `password` cannot be hashed as Vault would (empty, or past bcrypt's 72 bytes). */
export function checkPassword(password: string): void {
  if (password === '') throw invalid('password', 'must not be empty');
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES)
    throw invalid('password', `must be at most ${MAX_PASSWORD_BYTES} bytes (bcrypt reads no further)`);
}

/** True for a well-formed bcrypt hash with a cost between 4 and 31 (for `password_hash`). */
export function isBcryptHash(s: string): boolean {
  const m = HASH_RE.exec(s);
  if (!m) return false;
  const cost = Number(m[1]);
  return cost >= 4 && cost <= 31;
}
