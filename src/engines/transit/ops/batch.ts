/**
 * Batch plumbing shared by encrypt, decrypt, rewrap, hmac, sign and verify (spec section 7 items 1-2,
 * reference transit-wire.md section 3.4): per-item errors, the HTTP status of a partly or wholly
 * failed batch, and cooperative yielding so a 10,000-item batch never starves other requests.
 */
import { isKeyholdError } from '../../../framework/errors.js';

/** The outcome of one item: its error text and whether the error was the caller's. */
export interface ItemError {
  message: string;
  user: boolean;
  /** 503 when a managed key's HSM/KMS is unavailable (a single-item request answers with it). */
  unavailable?: boolean;
}

/** Turn a thrown error into an item error (400-class errors are user errors; anything else internal). */
export function itemError(e: unknown): ItemError {
  if (isKeyholdError(e))
    return e.status === 503
      ? { message: e.message, user: false, unavailable: true }
      : { message: e.message, user: e.status < 500 };
  return { message: 'internal error', user: false };
}

/** Status and warnings of a batch: 200, or for failures 400/500 (partial: overridable, 1..599). */
export function batchStatus(
  errors: ReadonlyArray<ItemError | undefined>,
  override: number | undefined,
): { status: number; warnings: string[] } {
  let failed = 0;
  let user = false;
  for (const e of errors) {
    if (!e) continue;
    failed++;
    if (e.user) user = true;
  }
  if (failed === 0) return { status: 200, warnings: [] };
  const base = user ? 400 : 500;
  if (failed === errors.length || override === undefined) return { status: base, warnings: [] };
  if (override < 1 || override > 599) {
    return {
      status: base,
      warnings: [`invalid HTTP response code override from partial_failure_response_code, reverting to ${base}`],
    };
  }
  return { status: override, warnings: [] };
}

/** Yields to the event loop after `budgetMs` of synchronous work (no timing is asserted on it). */
export class Yielder {
  private last = performance.now();
  constructor(private readonly budgetMs = 8) {}
  /** Await between items. */
  async tick(): Promise<void> {
    const now = performance.now();
    if (now - this.last < this.budgetMs) return;
    await new Promise<void>((r) => setImmediate(r));
    this.last = performance.now();
  }
}
