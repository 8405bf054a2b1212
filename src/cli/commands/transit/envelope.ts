/**
 * `transit encrypt|decrypt --envelope`: any size, encrypted or decrypted locally in chunks with a data
 * key from the daemon. The streams are the process's own stdin/stdout (or --file/--output).
 */
import { rmSync } from 'node:fs';
import type { ApiClient, Invocation } from '../../command.js';
import { LocalError } from '../../errors.js';
import { mountOf, seg } from './io.js';

interface EnvelopeOpts {
  file?: string;
  output?: string;
  context?: string;
}

/** `transit encrypt --envelope`. */
export async function envelopeEncrypt(inv: Invocation, name: string): Promise<void> {
  const o = inv.opts as EnvelopeOpts;
  const client = inv.client;
  const mount = mountOf(inv);
  const ctxBody: Record<string, unknown> = o.context ? { context: o.context } : {};
  const dk = await client.write(`${mount}/datakey/wrapped/${seg(name)}`, { bits: 256, ...ctxBody });
  const wrapped = String((dk.body?.data as Record<string, unknown> | undefined)?.ciphertext ?? '');
  const key = await unwrapKey(client, mount, name, wrapped, ctxBody);
  const { EnvelopeEncryptor, buildHeader } = await import('../../../crypto/envelope.js');
  await runPipeline(o, new EnvelopeEncryptor(key, buildHeader(wrapped)));
}

/** `transit decrypt --envelope`. */
export async function envelopeDecrypt(inv: Invocation, name: string): Promise<void> {
  const o = inv.opts as EnvelopeOpts;
  const client = inv.client;
  const mount = mountOf(inv);
  const ctxBody: Record<string, unknown> = o.context ? { context: o.context } : {};
  const { EnvelopeDecryptor } = await import('../../../crypto/envelope.js');
  await runPipeline(o, new EnvelopeDecryptor((wrapped) => unwrapKey(client, mount, name, wrapped, ctxBody)));
}

async function unwrapKey(
  client: ApiClient,
  mount: string,
  name: string,
  wrapped: string,
  extra: Record<string, unknown>,
): Promise<Buffer> {
  const res = await client.write(`${mount}/decrypt/${seg(name)}`, { ciphertext: wrapped, ...extra });
  const key = Buffer.from(String((res.body?.data as Record<string, unknown> | undefined)?.plaintext ?? ''), 'base64');
  if (key.length !== 32) throw new LocalError('the daemon returned a data key of the wrong size');
  return key;
}

/** Stream --file/stdin through `transform` into --output/stdout; a failed run removes --output. */
async function runPipeline(o: EnvelopeOpts, transform: import('node:stream').Transform): Promise<void> {
  const { createReadStream, createWriteStream } = await import('node:fs');
  const { rm } = await import('node:fs/promises');
  const { pipeline } = await import('node:stream/promises');
  const { EnvelopeError } = await import('../../../crypto/envelope.js');
  const HWM = 1 << 20;
  const input = o.file ? createReadStream(o.file, { highWaterMark: HWM }) : process.stdin;
  const output = o.output ? createWriteStream(o.output, { highWaterMark: HWM, mode: 0o600 }) : process.stdout;
  // A progress bar with throughput on a TTY (stderr) only; a no-op on pipes, with NO_COLOR or TERM=dumb.
  const { progressBar, meter } = await import('../../tty.js');
  let total: number | undefined;
  if (o.file) total = (await import('node:fs')).statSync(o.file).size;
  const progress = progressBar({ total, label: 'envelope' });
  // Ctrl-C or a closed output pipe must not leave a partial --output behind (the catch below does
  // the same for failures).
  const { onInterrupt } = await import('../../signals.js');
  const outPath = o.output;
  const forget = onInterrupt(() => {
    progress.done();
    if (outPath) (output as import('node:fs').WriteStream).destroy();
    if (outPath) rmSync(outPath, { force: true });
  });
  try {
    if (progress.active) await pipeline(input, meter(progress), transform, output);
    else await pipeline(input, transform, output);
    forget();
    progress.done();
  } catch (e) {
    forget();
    progress.done();
    if (o.output) await rm(o.output, { force: true });
    if (e instanceof EnvelopeError) throw new LocalError(e.message);
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR')
      throw new LocalError(`${(e as NodeJS.ErrnoException).path ?? 'file'}: ${code}`);
    throw e;
  }
}
