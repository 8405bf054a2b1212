/** Where rate-limit quotas live, and a quota name checked before it goes into a path. */
import { LocalError } from '../../errors.js';

/** The quotas' API path (`keyhold write sys/quotas/rate-limit/NAME ...` works too). */
export const QUOTA_BASE = 'sys/quotas/rate-limit';

/** `sys/quotas/rate-limit/NAME` for a valid name (letters, digits, `.`, `-`, `_`). */
export function quotaPath(name: unknown): string {
  const n = String(name ?? '').trim();
  if (!/^[\w.-]+$/.test(n)) throw new LocalError(`invalid quota name "${String(name)}"`);
  return `${QUOTA_BASE}/${encodeURIComponent(n)}`;
}
