/**
 * The `random` endpoint (reference transit-wire.md section 3.2.5): 1..131072 bytes from the OS RNG,
 * base64 or hex. keyhold has no seal entropy augmentation, so `seal` is refused with a clear 400
 * instead of silently falling back; `all` mixes every available source, which here is the platform one.
 */
import { randomBytes } from 'node:crypto';
import { invalid } from '../../../framework/errors.js';

/** Entropy sources and whether keyhold has them. */
export const ENTROPY_SOURCES: Readonly<Record<string, boolean>> = { platform: true, all: true, seal: false };

/** Upper bound of `bytes` (Vault's). */
export const MAX_RANDOM_BYTES = 131072;

/** Resolve `random(/:urlsource)(/:urlbytes)`: one segment is a source when it names one, else a byte count. */
export function resolveRandomPath(
  seg1: string | undefined,
  seg2: string | undefined,
): { source?: string; bytes?: number } {
  let source: string | undefined;
  let bytesText: string | undefined;
  if (seg1 !== undefined && seg2 !== undefined) {
    source = seg1;
    bytesText = seg2;
  } else if (seg1 !== undefined) {
    if (Object.prototype.hasOwnProperty.call(ENTROPY_SOURCES, seg1)) source = seg1;
    else bytesText = seg1;
  }
  let bytes: number | undefined;
  if (bytesText !== undefined) {
    if (!/^[+-]?\d{1,9}$/.test(bytesText))
      throw invalid(
        `error parsing url-set byte count: strconv.Atoi: parsing "${bytesText.slice(0, 32)}": invalid syntax`,
      );
    bytes = Number(bytesText);
  }
  return { source, bytes };
}

/** Random bytes, encoded. */
export function randomOutput(bytes: number, format: string, source: string): string {
  if (!Object.prototype.hasOwnProperty.call(ENTROPY_SOURCES, source)) {
    throw invalid(`unsupported entropy source "${source}"; must be "platform" or "seal", or "all"`);
  }
  if (!ENTROPY_SOURCES[source]) {
    throw invalid(
      `source: entropy source "${source}" is not available in keyhold (no seal entropy augmentation); use "platform" or "all"`,
    );
  }
  if (format !== 'base64' && format !== 'hex')
    throw invalid(`unsupported encoding format "${format}"; must be "hex" or "base64"`);
  if (bytes < 1) throw invalid('"bytes" cannot be less than 1');
  if (bytes > MAX_RANDOM_BYTES) throw invalid(`"bytes" should be less than ${MAX_RANDOM_BYTES}`);
  return randomBytes(bytes).toString(format);
}
