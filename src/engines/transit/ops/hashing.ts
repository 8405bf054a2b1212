/** The `hash` endpoint's computation (reference transit-wire.md section 3.2.6): sha2 and sha3 families, hex or base64. */
import { createHash } from 'node:crypto';
import { invalid } from '../../../framework/errors.js';
import { hashAlgorithm } from './hash-algorithms.js';

/** Output encodings of hash and random. */
export const OUTPUT_FORMATS = ['hex', 'base64'] as const;

/** Hash `input` with the wire-named algorithm; `format` hex (default) or base64. */
export function hashInput(algorithm: string, input: Buffer, format: string): string {
  if (!(OUTPUT_FORMATS as readonly string[]).includes(format))
    throw invalid(`unsupported encoding format ${format}; must be "hex" or "base64"`);
  const alg = hashAlgorithm(algorithm);
  if (!alg || !alg.hash) throw invalid(`unsupported algorithm ${algorithm}`);
  return createHash(alg.node!)
    .update(input)
    .digest(format as 'hex' | 'base64');
}
