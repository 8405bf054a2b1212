/**
 * `keyhold transit keys ...` (key lifecycle) and `keyhold transit import` / `import-version` (BYOK
 * helpers that fetch the wrapping key and build the import ciphertext client-side).
 * Simple commands come from the route table's cli hints; commands that move key material (read,
 * delete, export, backup, restore, wrapping-key, byok-export, import) are written here so that backups
 * and exports go to stdout or `--output`, and secrets only come from stdin or files, never argv.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { LocalError } from '../client.js';
import { commandPath, registerRouteCommands } from '../route-commands.js';
import { keyRoutes } from '../../engines/transit/routes/key-routes.js';
import { importHash, wrapForImport } from '../../engines/transit/keyring/byok.js';
import { pemBlocks } from '../../engines/transit/keyring/der.js';
import { KEY_TYPES, keyTypeInfo } from '../../engines/transit/keyring/key-types.js';
import { publicJwk } from '../../engines/transit/ops/jwt.js';

/** Commands written by hand below (skipped by the route-table generator). */
const HAND_WRITTEN = new Set(['transit keys export', 'transit keys backup', 'transit keys restore', 'transit keys wrapping-key', 'transit keys byok-export', 'transit import', 'transit import-version']);

const mountOf = (c: Command): string => String((c.opts() as { mount?: string }).mount ?? 'transit').replace(/^\/+|\/+$/g, '');
const enc = encodeURIComponent;

/** Write `text` to `--output` (mode 0600) or stdout. */
function emit(text: string, output: string | undefined, what: string): void {
  if (output) {
    writeFileSync(output, text, { mode: 0o600 });
    process.stderr.write(`${what} written to ${output}\n`);
  } else process.stdout.write(text);
}

/** Read a file (or stdin for "-") whole. */
async function readSource(ctx: CliContext, file: string): Promise<Buffer> {
  if (file === '-') return ctx.stdin();
  try {
    return readFileSync(file.startsWith('@') ? file.slice(1) : file);
  } catch (e) {
    throw new LocalError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/**
 * Turn a key file into import material for `type`: a PEM private key (any of PKCS#8, PKCS#1, SEC 1)
 * becomes PKCS#8 DER; a PEM public key selects a public-key-only import; other bytes are taken as-is
 * (raw symmetric/hmac key, or PKCS#8 DER), or base64-decoded with `--base64`.
 */
export function keyFileMaterial(type: string, file: Buffer, base64: boolean): { material?: Buffer; publicKey?: string } {
  const info = keyTypeInfo(type);
  if (!info) throw new LocalError(`unknown key type "${type}"; one of ${Object.keys(KEY_TYPES).join(', ')}`);
  const text = file.toString('utf8');
  const blocks = text.includes('-----BEGIN ') ? pemBlocks(text) : [];
  if (blocks.length) {
    const b = blocks[0]!;
    if (b.label === 'PUBLIC KEY') return { publicKey: text.slice(text.indexOf('-----BEGIN PUBLIC KEY-----')) };
    if (!/PRIVATE KEY$/.test(b.label)) throw new LocalError(`unsupported PEM block "${b.label}": give a PRIVATE KEY or PUBLIC KEY`);
    if (info.kind !== 'asymmetric') throw new LocalError(`a PEM key cannot be imported as ${type}; give the raw key bytes`);
    try {
      const k = createPrivateKey({ key: text, format: 'pem' });
      return { material: Buffer.from(k.export({ format: 'der', type: 'pkcs8' })) };
    } catch {
      // PKCS#8 variants node cannot load (RSASSA-PSS, NSS Ed25519): send the DER and let the server decide.
      return { material: b.der };
    }
  }
  let bytes = file;
  if (base64) {
    const s = text.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s)) throw new LocalError('--base64: the file is not base64');
    bytes = Buffer.from(s, 'base64');
  }
  if (info.kind === 'asymmetric') {
    try {
      createPrivateKey({ key: bytes, format: 'der', type: 'pkcs8' });
    } catch {
      /* the server accepts more PKCS#8 variants; it will answer precisely */
    }
  }
  return { material: bytes };
}

async function byokSend(ctx: CliContext, c: Command, name: string, endpoint: 'import' | 'import_version', extra: Record<string, unknown>): Promise<void> {
  const o = c.opts() as { file: string; type?: string; hashFunction: string; base64?: boolean };
  const mount = mountOf(c);
  const client = ctx.client(c);
  let type = o.type;
  if (!type && endpoint === 'import_version') {
    const res = await client.request('GET', `${mount}/keys/${enc(name)}`);
    type = String((res.body?.data as { type?: string } | undefined)?.type ?? '');
  }
  type ??= 'aes256-gcm96';
  const hash = (() => {
    try {
      return importHash(o.hashFunction);
    } catch {
      throw new LocalError(`--hash-function: unknown hash function ${o.hashFunction}; use SHA1, SHA224, SHA256, SHA384 or SHA512`);
    }
  })();
  const { material, publicKey } = keyFileMaterial(type, await readSource(ctx, o.file), Boolean(o.base64));
  const body: Record<string, unknown> = { ...extra };
  if (endpoint === 'import') body.type = type;
  if (publicKey) body.public_key = publicKey;
  else {
    const wk = await client.request('GET', `${mount}/wrapping_key`);
    const pem = String((wk.body?.data as { public_key?: string } | undefined)?.public_key ?? '');
    body.ciphertext = wrapForImport(createPublicKey(pem), material!, hash).toString('base64');
    body.hash_function = o.hashFunction.toUpperCase();
  }
  await client.request('POST', `${mount}/keys/${enc(name)}/${endpoint}`, body);
  process.stderr.write(`Success! ${endpoint === 'import' ? 'Imported key' : 'Imported a version into key'} ${name} (${publicKey ? 'public key only' : type})\n`);
}

/** A public key as exported (PEM, or base64 raw for ed25519) to a KeyObject. */
function publicKeyObject(text: string): KeyObject {
  if (text.includes('-----BEGIN')) return createPublicKey(text);
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(text, 'base64').toString('base64url') }, format: 'jwk' });
}

/** `export public-key NAME [VERSION] --format jwk|jwks|pem`: text for stdout or --output. */
async function publicKeyAs(ctx: CliContext, c: Command, name: string, version: string | undefined, format: 'jwk' | 'jwks' | 'pem'): Promise<string> {
  const client = ctx.client(c);
  if (format === 'jwks' && !version) {
    // The server's JWK Set: exactly what relying parties fetch from jwks/NAME.
    const res = await client.request('GET', `${mountOf(c)}/jwks/${enc(name)}`);
    return JSON.stringify(res.body, null, 2) + '\n';
  }
  const res = await client.request('GET', `${mountOf(c)}/export/public-key/${enc(name)}/${enc(version ?? 'latest')}`);
  const keys = ((res.body?.data as { keys?: Record<string, string> } | undefined)?.keys ?? {}) as Record<string, string>;
  const text = Object.values(keys)[0];
  if (!text) throw new LocalError(`key ${name} has no public key for version ${version ?? 'latest'}`);
  const pub = publicKeyObject(text);
  if (format === 'pem') return String(pub.export({ format: 'pem', type: 'spki' }));
  const jwk = publicJwk(pub);
  return JSON.stringify(format === 'jwk' ? jwk : { keys: [jwk] }, null, 2) + '\n';
}

/** Register the transit-keys commands. */
export function register(program: Command, ctx: CliContext): void {
  const keys = commandPath(program, ['transit', 'keys']).description('Transit keys: create, read, rotate, configure, export, back up, import');
  commandPath(program, ['transit']).description('Transit engine: keys and cryptographic operations');

  keys
    .command('read')
    .description('Show a key: type, versions (public keys for asymmetric types), settings')
    .argument('<name>', 'key name')
    .option('--mount <path>', 'mount path of the transit engine', 'transit')
    .option('--context <base64>', 'context to show derived Ed25519 public keys')
    .action(async (name: string, _o: unknown, c: Command) => {
      const ctxParam = (c.opts() as { context?: string }).context;
      const res = await ctx.client(c).request('GET', `${mountOf(c)}/keys/${enc(name)}${ctxParam ? `?context=${enc(ctxParam)}` : ''}`);
      await ctx.print(c, res.body?.data ?? null);
    });

  keys
    .command('delete')
    .description('Delete a key and all its versions (needs deletion_allowed; data encrypted with it is lost)')
    .argument('<name>', 'key name')
    .option('--mount <path>', 'mount path of the transit engine', 'transit')
    .action(async (name: string, _o: unknown, c: Command) => {
      await ctx.client(c).request('DELETE', `${mountOf(c)}/keys/${enc(name)}`);
      process.stderr.write(`Success! Deleted key ${name}\n`);
    });

  keys
    .command('export')
    .description('Export key material (exportable keys) or public keys / certificate chains')
    .argument('<kind>', 'encryption-key, signing-key, hmac-key, public-key or certificate-chain')
    .argument('<name>', 'key name')
    .argument('[version]', 'a version number or "latest" (default: all live versions)')
    .option('--mount <path>', 'mount path of the transit engine', 'transit')
    .option('--output <file>', 'write the JSON export to this file (mode 0600) instead of stdout')
    .addHelpText(
      'after',
      '\npublic-key also prints with --format jwk (one version, default latest), jwks (the JWK Set of jwks/NAME, or one version) or pem.\n' +
        '\nExamples:\n  $ keyhold transit keys export encryption-key payments latest --field keys\n  $ keyhold transit keys export public-key signer --output signer-public.json\n  $ keyhold transit keys export public-key issuer --format jwks',
    )
    .action(async (kind: string, name: string, version: string | undefined, _o: unknown, c: Command) => {
      const format = ctx.globals(c).format;
      if (format === 'jwk' || format === 'jwks' || format === 'pem') {
        if (kind !== 'public-key') throw new LocalError(`--format ${format} applies to public-key exports only`);
        const out = (c.opts() as { output?: string }).output;
        const text = await publicKeyAs(ctx, c, name, version, format);
        if (out) emit(text, out, 'Export');
        else process.stdout.write(text);
        return;
      }
      const res = await ctx.client(c).request('GET', `${mountOf(c)}/export/${enc(kind)}/${enc(name)}${version ? '/' + enc(version) : ''}`);
      const data = res.body?.data ?? null;
      const out = (c.opts() as { output?: string }).output;
      if (out) emit(JSON.stringify(data, null, 2) + '\n', out, 'Export');
      else await ctx.print(c, data);
    });

  keys
    .command('backup')
    .description('Print a Vault-format plaintext backup of a key (needs exportable and allow_plaintext_backup)')
    .argument('<name>', 'key name')
    .option('--mount <path>', 'mount path of the transit engine', 'transit')
    .option('--output <file>', 'write the backup to this file (mode 0600) instead of stdout')
    .addHelpText('after', '\nExamples:\n  $ keyhold transit keys backup payments --output payments.backup\n  $ keyhold transit keys backup payments > payments.backup')
    .action(async (name: string, _o: unknown, c: Command) => {
      const res = await ctx.client(c).request('GET', `${mountOf(c)}/backup/${enc(name)}`);
      const blob = String((res.body?.data as { backup?: string } | undefined)?.backup ?? '');
      emit(blob + '\n', (c.opts() as { output?: string }).output, 'Backup');
    });

  keys
    .command('restore')
    .description('Restore a key from a backup read from stdin (or --backup @file)')
    .argument('[name]', 'name for the restored key (default: the name in the backup)')
    .option('--mount <path>', 'mount path of the transit engine', 'transit')
    .option('--backup <@file|->', 'where to read the backup: @file or - (stdin, the default)', '-')
    .option('--force', 'overwrite an existing key of that name')
    .addHelpText('after', '\nExamples:\n  $ keyhold transit keys restore payments < payments.backup\n  $ keyhold transit keys restore --backup @payments.backup --force')
    .action(async (name: string | undefined, _o: unknown, c: Command) => {
      const o = c.opts() as { backup: string; force?: boolean };
      if (o.backup !== '-' && !o.backup.startsWith('@')) throw new LocalError('--backup is secret: pass @file or - (stdin), not the value itself');
      const blob = (await readSource(ctx, o.backup)).toString('utf8').trim();
      if (!blob) throw new LocalError('no backup given: pipe it on stdin or pass --backup @file');
      const body: Record<string, unknown> = { backup: blob, force: Boolean(o.force) };
      await ctx.client(c).request('POST', `${mountOf(c)}/restore${name ? '/' + enc(name) : ''}`, body);
      process.stderr.write(`Success! Restored key${name ? ' ' + name : ''}\n`);
    });

  keys
    .command('wrapping-key')
    .description("Print the mount's RSA-4096 wrapping public key (PEM) used to build import ciphertexts")
    .option('--mount <path>', 'mount path of the transit engine', 'transit')
    .action(async (_o: unknown, c: Command) => {
      const res = await ctx.client(c).request('GET', `${mountOf(c)}/wrapping_key`);
      const g = ctx.globals(c);
      if (g.format || g.field) await ctx.print(c, res.body?.data ?? null);
      else process.stdout.write(String((res.body?.data as { public_key?: string } | undefined)?.public_key ?? ''));
    });

  keys
    .command('byok-export')
    .description('Export a key wrapped for another RSA key (for example another service\'s wrapping key imported as a public key)')
    .argument('<destination>', 'RSA key to wrap for')
    .argument('<source>', 'key to export (must be exportable)')
    .argument('[version]', 'a version number or "latest" (default: all)')
    .option('--mount <path>', 'mount path of the transit engine', 'transit')
    .option('--hash <name>', 'OAEP hash: SHA1, SHA224, SHA256, SHA384, SHA512', 'SHA256')
    .option('--output <file>', 'write the JSON result to this file (mode 0600) instead of stdout')
    .action(async (destination: string, source: string, version: string | undefined, _o: unknown, c: Command) => {
      const o = c.opts() as { hash: string; output?: string };
      const res = await ctx.client(c).request('GET', `${mountOf(c)}/byok-export/${enc(destination)}/${enc(source)}${version ? '/' + enc(version) : ''}?hash=${enc(o.hash)}`);
      const data = res.body?.data ?? null;
      if (o.output) emit(JSON.stringify(data, null, 2) + '\n', o.output, 'Wrapped export');
      else await ctx.print(c, data);
    });

  registerRouteCommands(program, ctx, keyRoutes, { defaultMount: 'transit', skip: (r) => HAND_WRITTEN.has(r.cli?.command ?? '') });

  const transit = commandPath(program, ['transit']);
  const importCmd = (name: string, desc: string) =>
    transit
      .command(name)
      .description(desc)
      .argument('<name>', 'key name')
      .requiredOption('--file <path>', 'key file: PEM private/public key, PKCS#8 DER, or raw key bytes ("-" = stdin)')
      .option('--type <type>', 'key type (import: default aes256-gcm96; import-version: the key\'s type)')
      .option('--hash-function <name>', 'OAEP hash: SHA1, SHA224, SHA256, SHA384, SHA512', 'SHA256')
      .option('--base64', 'the file holds base64 text of the raw key')
      .option('--mount <path>', 'mount path of the transit engine', 'transit');

  importCmd('import', 'Import a key you hold (BYOK): fetches the wrapping key and wraps the key locally')
    .option('--allow-rotation', 'allow rotating the imported key inside keyhold')
    .option('--derived', 'derive a key per request from a context')
    .option('--exportable', 'allow export (one-way)')
    .option('--allow-plaintext-backup', 'allow plaintext backup (one-way)')
    .option('--auto-rotate-period <duration>', 'auto-rotation period (needs --allow-rotation)')
    .addHelpText('after', '\nExamples:\n  $ keyhold transit import payments --file aes.key --type aes256-gcm96\n  $ keyhold transit import signer --file signer.pem --type ecdsa-p256\n  $ keyhold transit import verifier --file public.pem --type ed25519   # public key only')
    .action(async (name: string, _o: unknown, c: Command) => {
      const o = c.opts() as Record<string, unknown>;
      const extra: Record<string, unknown> = {};
      if (o.allowRotation) extra.allow_rotation = true;
      if (o.derived) extra.derived = true;
      if (o.exportable) extra.exportable = true;
      if (o.allowPlaintextBackup) extra.allow_plaintext_backup = true;
      if (o.autoRotatePeriod) extra.auto_rotate_period = o.autoRotatePeriod;
      await byokSend(ctx, c, name, 'import', extra);
    });

  importCmd('import-version', 'Import new material into an imported key (new version, or complete a public-only version)')
    .option('--version <n>', 'complete this public-only version with its private key')
    .action(async (name: string, _o: unknown, c: Command) => {
      const v = (c.opts() as { version?: string }).version;
      await byokSend(ctx, c, name, 'import_version', v ? { version: v } : {});
    });
}
