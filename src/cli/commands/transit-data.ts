/**
 * `keyhold transit encrypt|decrypt|rewrap|datakey|random|hash|hmac|sign|verify`: binary-safe data
 * operations for shell scripts. Input bytes come from stdin or --file and are base64-encoded here;
 * decrypt writes raw bytes; verify exits 0 when valid and 1 when not (like `openssl dgst -verify`).
 * `--envelope` encrypts or decrypts any size locally in chunks with a data key from the daemon.
 * Heavy modules (crypto, streams) are imported lazily so start-up stays lean.
 */
import { rmSync } from 'node:fs';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { LocalError } from '../client.js';
import { commandPath, registerRouteCommands } from '../route-commands.js';
import { jwtRoutes } from '../../engines/transit/routes/jwt-routes.js';

interface InputOpts {
  file?: string;
  base64?: boolean;
}

/** Raw input bytes from --file or stdin. */
async function inputBytes(ctx: CliContext, o: InputOpts): Promise<Buffer> {
  if (o.file) {
    const { readFile } = await import('node:fs/promises');
    try {
      return await readFile(o.file);
    } catch (e) {
      throw new LocalError(`cannot read ${o.file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }
  return ctx.stdin();
}

/** Input as base64 for the API (`--base64`: the input already is base64 text). */
async function inputBase64(ctx: CliContext, o: InputOpts): Promise<string> {
  const b = await inputBytes(ctx, o);
  if (!o.base64) return b.toString('base64');
  const s = b.toString('utf8').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) throw new LocalError('--base64: input is not valid base64');
  return s;
}

/** A positional value or, when absent, stdin text (trimmed). */
async function argOrStdin(ctx: CliContext, arg: string | undefined, what: string): Promise<string> {
  const v = arg && arg !== '-' ? arg : (await ctx.stdin()).toString('utf8').trim();
  if (!v) throw new LocalError(`no ${what} given (argument or stdin)`);
  return v;
}

const mountOf = (o: { mount?: string }): string => String(o.mount ?? 'transit').replace(/^\/+|\/+$/g, '');
const seg = (s: string): string => encodeURIComponent(s);
const intOpt = (v: string): number => {
  if (!/^-?\d+$/.test(v)) throw new LocalError(`expected an integer, got "${v}"`);
  return Number(v);
};

/** Whether the user asked for structured output (then print the response data instead of raw bytes). */
function structured(ctx: CliContext, cmd: Command): boolean {
  const g = ctx.globals(cmd);
  return Boolean(g.field || (g.format && g.format !== 'raw'));
}

function withCommon(c: Command): Command {
  return c.option('--mount <path>', 'mount path of the transit engine', 'transit');
}

function withInput(c: Command): Command {
  return c.option('--file <path>', 'read the input from this file instead of stdin').option('--base64', 'the input is already base64 text');
}

function setIf(body: Record<string, unknown>, k: string, v: unknown): void {
  if (v !== undefined) body[k] = v;
}

async function writeOut(data: Buffer | string): Promise<void> {
  await new Promise<void>((resolve, reject) => process.stdout.write(data, (e) => (e ? reject(e) : resolve())));
}

/** Register the transit data commands. */
export function register(program: Command, ctx: CliContext): void {
  const transit = commandPath(program, ['transit']);
  if (!transit.description()) transit.description('Transit engine: keys and cryptographic operations');

  withInput(withCommon(transit.command('encrypt')))
    .description('Encrypt stdin (or --file) with a named key; prints the ciphertext (--field ciphertext for only it)')
    .argument('<name>', 'key name')
    .option('--context <b64>', 'key-derivation context (base64)')
    .option('--associated-data <b64>', 'additional authenticated data (base64)')
    .option('--key-version <n>', 'key version (0 = latest)', intOpt)
    .option('--nonce <b64>', 'nonce (convergent keys from Vault 0.6.1 only)')
    .option('--padding-scheme <scheme>', 'RSA keys: oaep or pkcs1v15')
    .option('--type <type>', 'key type when the key is created by this request')
    .option('--envelope', 'encrypt locally in chunks with a fresh data key (any size)')
    .option('--output <path>', 'envelope: write to this file instead of stdout')
    .addHelpText('after', '\nExamples:\n  $ printf secret | keyhold transit encrypt app --field ciphertext\n  $ keyhold transit encrypt app --envelope --file big.tar --output big.tar.khev')
    .action(async (name: string, o, cmd: Command) => {
      if (o.envelope) return envelopeEncrypt(ctx, cmd, name, o);
      const body: Record<string, unknown> = { plaintext: await inputBase64(ctx, o) };
      setIf(body, 'context', o.context);
      setIf(body, 'associated_data', o.associatedData);
      setIf(body, 'key_version', o.keyVersion);
      setIf(body, 'nonce', o.nonce);
      setIf(body, 'padding_scheme', o.paddingScheme);
      setIf(body, 'type', o.type);
      const res = await ctx.client(cmd).write(`${mountOf(o)}/encrypt/${seg(name)}`, body).catch(tooLargeHint);
      await ctx.print(cmd, res.body?.data ?? {});
    });

  withCommon(transit.command('decrypt'))
    .description('Decrypt a ciphertext (argument or stdin) and write the raw plaintext bytes to stdout')
    .argument('<name>', 'key name')
    .argument('[ciphertext]', 'vault:vN:... ciphertext (default: read from stdin)')
    .option('--base64', 'print the plaintext base64-encoded instead of raw bytes')
    .option('--context <b64>', 'key-derivation context (base64)')
    .option('--associated-data <b64>', 'additional authenticated data (base64)')
    .option('--nonce <b64>', 'nonce (convergent keys from Vault 0.6.1 only)')
    .option('--padding-scheme <scheme>', 'RSA keys: oaep or pkcs1v15')
    .option('--envelope', 'decrypt an envelope made by `transit encrypt --envelope`')
    .option('--file <path>', 'envelope: read from this file instead of stdin')
    .option('--output <path>', 'envelope: write to this file instead of stdout')
    .addHelpText('after', '\nExamples:\n  $ keyhold transit decrypt app vault:v1:... > secret.bin\n  $ keyhold transit decrypt app --envelope --file big.tar.khev --output big.tar')
    .action(async (name: string, ciphertext: string | undefined, o, cmd: Command) => {
      if (o.envelope) return envelopeDecrypt(ctx, cmd, name, o);
      const body: Record<string, unknown> = { ciphertext: await argOrStdin(ctx, ciphertext, 'ciphertext') };
      setIf(body, 'context', o.context);
      setIf(body, 'associated_data', o.associatedData);
      setIf(body, 'nonce', o.nonce);
      setIf(body, 'padding_scheme', o.paddingScheme);
      const res = await ctx.client(cmd).write(`${mountOf(o)}/decrypt/${seg(name)}`, body);
      const data = (res.body?.data ?? {}) as Record<string, unknown>;
      if (structured(ctx, cmd)) return ctx.print(cmd, data);
      const pt = String(data.plaintext ?? '');
      await writeOut(o.base64 ? pt + '\n' : Buffer.from(pt, 'base64'));
    });

  withCommon(transit.command('rewrap'))
    .description('Re-encrypt a ciphertext (argument or stdin) with the latest key version; never returns plaintext')
    .argument('<name>', 'key name')
    .argument('[ciphertext]', 'vault:vN:... ciphertext (default: read from stdin)')
    .option('--context <b64>', 'key-derivation context (base64)')
    .option('--key-version <n>', 'key version to encrypt with (0 = latest)', intOpt)
    .action(async (name: string, ciphertext: string | undefined, o, cmd: Command) => {
      const body: Record<string, unknown> = { ciphertext: await argOrStdin(ctx, ciphertext, 'ciphertext') };
      setIf(body, 'context', o.context);
      setIf(body, 'key_version', o.keyVersion);
      const res = await ctx.client(cmd).write(`${mountOf(o)}/rewrap/${seg(name)}`, body);
      await ctx.print(cmd, res.body?.data ?? {});
    });

  withCommon(transit.command('datakey'))
    .description('Generate a data key: "wrapped" (ciphertext only) or "plaintext" (ciphertext and key)')
    .argument('<type>', 'plaintext or wrapped')
    .argument('<name>', 'key name')
    .option('--bits <n>', 'data key size: 128, 256 or 512', intOpt)
    .option('--context <b64>', 'key-derivation context (base64)')
    .option('--key-version <n>', 'key version (0 = latest)', intOpt)
    .action(async (type: string, name: string, o, cmd: Command) => {
      const body: Record<string, unknown> = {};
      setIf(body, 'bits', o.bits);
      setIf(body, 'context', o.context);
      setIf(body, 'key_version', o.keyVersion);
      const res = await ctx.client(cmd).write(`${mountOf(o)}/datakey/${seg(type)}/${seg(name)}`, body);
      await ctx.print(cmd, res.body?.data ?? {});
    });

  withCommon(transit.command('random'))
    .description('Random bytes from the daemon (base64 text by default)')
    .argument('[bytes]', 'number of bytes (default 32)')
    .option('--encoding <enc>', 'base64 (default) or hex')
    .option('--source <source>', 'platform (default) or all')
    .option('--binary', 'write the raw bytes instead of text')
    .action(async (bytes: string | undefined, o, cmd: Command) => {
      const body: Record<string, unknown> = { format: o.binary ? 'base64' : (o.encoding ?? 'base64') };
      if (bytes !== undefined) body.bytes = intOpt(bytes);
      setIf(body, 'source', o.source);
      const res = await ctx.client(cmd).write(`${mountOf(o)}/random`, body);
      const data = (res.body?.data ?? {}) as Record<string, unknown>;
      if (structured(ctx, cmd)) return ctx.print(cmd, data);
      const v = String(data.random_bytes ?? '');
      await writeOut(o.binary ? Buffer.from(v, 'base64') : v + '\n');
    });

  withInput(withCommon(transit.command('hash')))
    .description('Hash stdin (or --file); prints the digest (hex by default)')
    .argument('[algorithm]', 'sha2-256 (default), sha2-224/384/512, sha3-224/256/384/512')
    .option('--encoding <enc>', 'hex (default) or base64')
    .action(async (algorithm: string | undefined, o, cmd: Command) => {
      const body: Record<string, unknown> = { input: await inputBase64(ctx, o) };
      setIf(body, 'algorithm', algorithm);
      setIf(body, 'format', o.encoding);
      const res = await ctx.client(cmd).write(`${mountOf(o)}/hash`, body);
      const data = (res.body?.data ?? {}) as Record<string, unknown>;
      if (structured(ctx, cmd)) return ctx.print(cmd, data);
      await writeOut(String(data.sum ?? '') + '\n');
    });

  withInput(withCommon(transit.command('hmac')))
    .description('HMAC of stdin (or --file) with a key (--field hmac for only the value)')
    .argument('<name>', 'key name')
    .option('--algorithm <alg>', 'sha2-256 (default), sha2-224/384/512, sha3-*, sha1')
    .option('--key-version <n>', 'key version (0 = latest)', intOpt)
    .action(async (name: string, o, cmd: Command) => {
      const body: Record<string, unknown> = { input: await inputBase64(ctx, o) };
      setIf(body, 'algorithm', o.algorithm);
      setIf(body, 'key_version', o.keyVersion);
      const res = await ctx.client(cmd).write(`${mountOf(o)}/hmac/${seg(name)}`, body);
      await ctx.print(cmd, res.body?.data ?? {});
    });

  withSignatureOptions(withInput(withCommon(transit.command('sign'))))
    .description('Sign stdin (or --file) with an asymmetric key (--field signature for only the value)')
    .argument('<name>', 'key name')
    .option('--key-version <n>', 'key version (0 = latest)', intOpt)
    .action(async (name: string, o, cmd: Command) => {
      const body: Record<string, unknown> = { input: await inputBase64(ctx, o) };
      signatureBody(body, o);
      setIf(body, 'key_version', o.keyVersion);
      const res = await ctx.client(cmd).write(`${mountOf(o)}/sign/${seg(name)}`, body);
      await ctx.print(cmd, res.body?.data ?? {});
    });

  withSignatureOptions(withInput(withCommon(transit.command('verify'))))
    .description('Verify a signature or HMAC of stdin (or --file); exit 0 when valid, 1 when not')
    .argument('<name>', 'key name')
    .option('--signature <sig>', 'signature to check (vault:vN:...; @file or - allowed)')
    .option('--hmac <hmac>', 'HMAC to check (vault:vN:...; @file or - allowed)')
    .action(async (name: string, o, cmd: Command) => {
      if (!o.signature === !o.hmac) throw new LocalError('give exactly one of --signature or --hmac');
      const body: Record<string, unknown> = { input: await inputBase64(ctx, o) };
      if (o.signature) body.signature = (await ctx.valueOf(o.signature)).trim();
      if (o.hmac) body.hmac = (await ctx.valueOf(o.hmac)).trim();
      signatureBody(body, o);
      const res = await ctx.client(cmd).write(`${mountOf(o)}/verify/${seg(name)}`, body);
      const data = (res.body?.data ?? {}) as Record<string, unknown>;
      if (structured(ctx, cmd)) await ctx.print(cmd, data);
      else await writeOut(data.valid === true ? 'Verified OK\n' : 'Verification failure\n');
      if (data.valid !== true) process.exitCode = 1;
    });

  // transit jwt sign (from its route); verify is written here: the JWT comes from stdin or a file
  // (it is a bearer credential: never argv), and the exit status says valid (0) or not (1).
  commandPath(program, ['transit', 'jwt']).description('JWTs signed with transit keys (JWKS at transit/jwks/NAME)');
  registerRouteCommands(program, ctx, jwtRoutes, { defaultMount: 'transit', skip: (r) => r.cli?.command === 'transit jwt verify' });
  withCommon(commandPath(program, ['transit', 'jwt']).command('verify'))
    .description('Verify a JWT (stdin or --file) signed by a transit key; prints its claims; exit 0 when valid, 1 when not')
    .argument('<name>', 'key name')
    .option('--file <path>', 'read the JWT from this file instead of stdin')
    .option('--iss <issuer>', 'expected issuer')
    .option('--aud <audience>', 'accepted audience (comma-separated for several)')
    .option('--leeway <duration>', 'clock skew tolerated for exp and nbf, e.g. 30s')
    .addHelpText('after', '\nExamples:\n  $ keyhold transit jwt verify issuer --aud ci < token.jwt\n  $ keyhold transit jwt verify issuer --file token.jwt --format json')
    .action(async (name: string, o, cmd: Command) => {
      const token = (await inputBytes(ctx, o)).toString('utf8').trim();
      if (!token) throw new LocalError('no JWT given (stdin or --file)');
      const body: Record<string, unknown> = { token };
      setIf(body, 'iss', o.iss);
      setIf(body, 'aud', o.aud);
      setIf(body, 'leeway', o.leeway);
      const res = await ctx.client(cmd).write(`${mountOf(o)}/jwt/verify/${seg(name)}`, body);
      const data = (res.body?.data ?? {}) as Record<string, unknown>;
      if (structured(ctx, cmd)) await ctx.print(cmd, data);
      else if (data.valid === true) await writeOut(JSON.stringify(data.claims, null, 2) + '\n');
      else process.stderr.write(`Verification failure: ${String(data.error ?? 'invalid')}\n`);
      if (data.valid !== true) process.exitCode = 1;
    });
}

function withSignatureOptions(c: Command): Command {
  return c
    .option('--hash-algorithm <alg>', 'sha2-256 (default), sha2-224/384/512, sha3-*, sha1, none')
    .option('--prehashed', 'the input is already a digest (raw bytes)')
    .option('--signature-algorithm <alg>', 'RSA: pss (default) or pkcs1v15')
    .option('--marshaling-algorithm <alg>', 'ECDSA: asn1 (default) or jws')
    .option('--salt-length <len>', 'RSA PSS: auto (default), hash, or bytes')
    .option('--context <b64>', 'derived Ed25519: context (base64)');
}

function signatureBody(body: Record<string, unknown>, o: Record<string, unknown>): void {
  setIf(body, 'hash_algorithm', o.hashAlgorithm);
  if (o.prehashed) body.prehashed = true;
  setIf(body, 'signature_algorithm', o.signatureAlgorithm);
  setIf(body, 'marshaling_algorithm', o.marshalingAlgorithm);
  setIf(body, 'salt_length', o.saltLength);
  setIf(body, 'context', o.context);
}

function tooLargeHint(e: unknown): never {
  if ((e as { status?: number }).status === 413) process.stderr.write('hint: the input exceeds the request size limit; use --envelope for large data\n');
  throw e;
}

interface EnvelopeOpts {
  mount?: string;
  file?: string;
  output?: string;
  context?: string;
}

async function envelopeEncrypt(ctx: CliContext, cmd: Command, name: string, o: EnvelopeOpts): Promise<void> {
  const client = ctx.client(cmd);
  const mount = mountOf(o);
  const ctxBody: Record<string, unknown> = o.context ? { context: o.context } : {};
  const dk = await client.write(`${mount}/datakey/wrapped/${seg(name)}`, { bits: 256, ...ctxBody });
  const wrapped = String((dk.body?.data as Record<string, unknown> | undefined)?.ciphertext ?? '');
  const key = await unwrapKey(client, mount, name, wrapped, ctxBody);
  const { EnvelopeEncryptor, buildHeader } = await import('../../crypto/envelope.js');
  await runPipeline(o, new EnvelopeEncryptor(key, buildHeader(wrapped)));
}

async function envelopeDecrypt(ctx: CliContext, cmd: Command, name: string, o: EnvelopeOpts): Promise<void> {
  const client = ctx.client(cmd);
  const mount = mountOf(o);
  const ctxBody: Record<string, unknown> = o.context ? { context: o.context } : {};
  const { EnvelopeDecryptor } = await import('../../crypto/envelope.js');
  await runPipeline(o, new EnvelopeDecryptor((wrapped) => unwrapKey(client, mount, name, wrapped, ctxBody)));
}

async function unwrapKey(client: ReturnType<CliContext['client']>, mount: string, name: string, wrapped: string, extra: Record<string, unknown>): Promise<Buffer> {
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
  const { EnvelopeError } = await import('../../crypto/envelope.js');
  const HWM = 1 << 20;
  const input = o.file ? createReadStream(o.file, { highWaterMark: HWM }) : process.stdin;
  const output = o.output ? createWriteStream(o.output, { highWaterMark: HWM, mode: 0o600 }) : process.stdout;
  // A progress bar with throughput on a TTY (stderr) only; a no-op on pipes, with NO_COLOR or TERM=dumb.
  const { progressBar, meter } = await import('../tty.js');
  let total: number | undefined;
  if (o.file) total = (await import('node:fs')).statSync(o.file).size;
  const progress = progressBar({ total, label: 'envelope' });
  // Ctrl-C or a closed output pipe must not leave a partial --output behind (runPipeline's catch does
  // the same for failures).
  const { onInterrupt } = await import('../signals.js');
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
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') throw new LocalError(`${(e as NodeJS.ErrnoException).path ?? 'file'}: ${code}`);
    throw e;
  }
}
