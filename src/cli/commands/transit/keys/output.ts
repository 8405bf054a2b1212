/** Where transit key material goes and comes from: --output (mode 0600) or stdout; a file or stdin. */
import { readFileSync, writeFileSync } from 'node:fs';
import type { Invocation } from '../../../command.js';
import { LocalError } from '../../../errors.js';

/** Write `text` to `--output` (mode 0600) or stdout. */
export function emit(inv: Invocation, text: string, output: string | undefined, what: string): void {
  if (output) {
    writeFileSync(output, text, { mode: 0o600 });
    inv.io.stderr.write(`${what} written to ${output}\n`);
  } else inv.io.stdout.write(text);
}

/** Read a file (or stdin for "-") whole. */
export async function readSource(inv: Invocation, file: string): Promise<Buffer> {
  if (file === '-') return inv.io.stdin();
  try {
    return readFileSync(file.startsWith('@') ? file.slice(1) : file);
  } catch (e) {
    throw new LocalError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** `encodeURIComponent`. */
export const enc = encodeURIComponent;
