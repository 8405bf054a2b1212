/**
 * Operator commands of issue 27: `operator rotate`, `operator key-status` (barrier key terms),
 * `operator generate-root` (break-glass root token) and `operator snapshot save|restore|inspect`.
 * Output follows the vault CLI's (command/operator_rotate.go, operator_key_status.go,
 * operator_generate_root.go, operator_raft_snapshot_*.go): a table by default, the answer's data
 * with --format json.
 */
import type { Command } from 'commander';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { randomInt } from 'node:crypto';
import { LocalError, ServerError, type Client } from '../client.js';
import type { CliContext } from '../context.js';
import { success } from '../output.js';

/** Root token and OTP length (Vault >= 1.10): "hvs." + 24 base62 characters. */
const OTP_LENGTH = 28;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Undo Vault's OTP encoding of a generated root token: base64 (unpadded) of token XOR otp. */
export function decodeRootToken(encoded: string, otp: string): string {
  const e = Buffer.from(encoded.trim(), 'base64');
  const o = Buffer.from(otp.trim(), 'utf8');
  if (e.length !== o.length)
    throw new LocalError(
      `the encoded token is ${e.length} bytes long but the OTP is ${o.length}: use the OTP the generation was started with`,
    );
  const out = Buffer.alloc(e.length);
  for (let i = 0; i < e.length; i++) out[i] = e[i]! ^ o[i]!;
  return out.toString('utf8');
}

/** `-pgp-key`: a file holding a public key (binary, or its base64), or @file; sent as base64 of the binary key. */
function pgpKeyArg(v: string): string {
  const path = v.startsWith('@') ? v.slice(1) : v;
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new LocalError(
      `cannot read the PGP key file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  const text = bytes.toString('utf8').trim();
  if (text.startsWith('-----BEGIN'))
    throw new LocalError(
      `${path}: ASCII-armored keys are not accepted; export the binary key (gpg --export KEYID > key.gpg)`,
    );
  return (bytes[0]! & 0x80) !== 0 ? bytes.toString('base64') : text.replace(/\s+/g, '');
}

/** Key shares from stdin (one per line) or @file; never from argv. */
async function readShares(ctx: CliContext, arg: string | undefined, prompt: string): Promise<string[]> {
  let text: string;
  if (arg === undefined || arg === '-') text = await ctx.secret(prompt);
  else if (arg.startsWith('@')) text = await ctx.valueOf(arg);
  else
    throw new LocalError(
      'give key shares on stdin or as @file, not on the command line (it would show in ps and the shell history)',
    );
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
}

/** One request with a binary body or answer (snapshots); JSON errors become ServerError as with the client. */
function binaryRequest(client: Client, method: 'GET' | 'POST', path: string, body?: Buffer): Promise<Buffer> {
  const headers: Record<string, string> = { 'X-Vault-Request': 'true' };
  if (client.token) headers['X-Vault-Token'] = client.token;
  if (body) {
    headers['Content-Type'] = 'application/octet-stream';
    headers['Content-Length'] = String(body.length);
  }
  return new Promise((resolve, reject) => {
    const onRes = (r: import('node:http').IncomingMessage) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('error', reject);
      r.on('end', () => {
        const buf = Buffer.concat(chunks);
        if ((r.statusCode ?? 0) >= 400) {
          let parsed: Record<string, unknown> | null = null;
          try {
            parsed = JSON.parse(buf.toString('utf8')) as Record<string, unknown>;
          } catch {
            /* not JSON */
          }
          const errs = Array.isArray(parsed?.errors) ? (parsed!.errors as string[]) : [];
          reject(new ServerError(r.statusCode ?? 0, errs, parsed, `${method} ${path}`));
        } else resolve(buf);
      });
    };
    const urlPath = '/v1/' + path;
    let req;
    if (client.address.startsWith('unix://'))
      req = httpRequest({ socketPath: client.address.slice(7), path: urlPath, method, headers }, onRes);
    else {
      const u = new URL(client.address);
      const skip = /^(1|true)$/i.test(process.env.KEYHOLD_SKIP_VERIFY ?? process.env.VAULT_SKIP_VERIFY ?? '');
      const opts = {
        host: u.hostname.replace(/^\[|\]$/g, ''),
        port: u.port || (u.protocol === 'https:' ? 443 : 80),
        path: (u.pathname.replace(/\/$/, '') || '') + urlPath,
        method,
        headers,
      };
      req =
        u.protocol === 'https:'
          ? httpsRequest({ ...opts, rejectUnauthorized: !skip }, onRes)
          : httpRequest(opts, onRes);
    }
    req.on('error', (e: Error) => reject(new LocalError(`cannot reach keyhold at ${client.address}: ${e.message}`)));
    req.end(body);
  });
}

/** Read a snapshot file for restore or inspect. */
function readSnapshotFile(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new LocalError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

function generateRootView(b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    Nonce: b.nonce,
    Started: b.started,
    Progress: `${b.progress}/${b.required}`,
    Complete: b.complete,
  };
  if (b.encoded_token) out['Encoded Token'] = b.encoded_token;
  if (b.otp) out.OTP = b.otp;
  if (b.pgp_fingerprint) out['PGP Fingerprint'] = b.pgp_fingerprint;
  out['OTP Length'] = b.otp_length;
  return out;
}

interface KeyStatus {
  term: number;
  install_time: string;
  encryptions?: number;
}

function keyStatusView(s: KeyStatus): Record<string, unknown> {
  return { 'Key Term': s.term, 'Install Time': s.install_time, 'Encryption Count': s.encryptions ?? 0 };
}

/** Register the commands under `operator`. */
export function register(program: Command, ctx: CliContext): void {
  const operator = program.commands.find((c) => c.name() === 'operator') ?? program.command('operator');
  operator
    .command('rotate')
    .description(
      'Rotate the barrier key (sudo): new records are sealed under a new key term; every older term still decrypts',
    )
    .addHelpText('after', '\nExamples:\n  $ keyhold operator rotate')
    .action(async (_o, cmd: Command) => {
      const client = ctx.client(cmd);
      await client.request('POST', 'sys/rotate', {});
      const st = (await client.request('GET', 'sys/key-status')).body as { data: KeyStatus };
      const g = ctx.globals(cmd);
      if (g.field || (g.format && g.format !== 'table')) return ctx.print(cmd, st.data);
      success('Success! Rotated key');
      process.stdout.write('\n');
      await ctx.print(cmd, keyStatusView(st.data));
    });
  operator
    .command('key-status')
    .description('Show the barrier key term in use: its number, install time and encryption count (sudo)')
    .addHelpText('after', '\nExamples:\n  $ keyhold operator key-status\n  $ keyhold operator key-status --field term')
    .action(async (_o, cmd: Command) => {
      const st = (await ctx.client(cmd).request('GET', 'sys/key-status')).body as { data: KeyStatus };
      const g = ctx.globals(cmd);
      await ctx.print(cmd, g.field || (g.format && g.format !== 'table') ? st.data : keyStatusView(st.data));
    });
  operator
    .command('generate-root')
    .description('Make a new root token from a quorum of unseal key shares (recovery shares under an auto seal)')
    .option('--init', 'start a root token generation (the server makes the OTP unless --otp or --pgp-key is given)')
    .option('--cancel', 'cancel the generation in progress')
    .option('--status', 'show the generation in progress')
    .option('--generate-otp', 'print a fresh OTP of the right length and exit (no server needed)')
    .option(
      '--otp <otp>',
      'with --init: the OTP to encode the token with; with --decode: the OTP it was encoded with (@file or - for stdin)',
    )
    .option(
      '--decode <encoded>',
      'decode an encoded token with --otp and print the root token (no server needed; @file or -)',
    )
    .option(
      '--pgp-key <file>',
      'with --init: encrypt the token to this OpenPGP public key file (binary, as gpg --export writes it)',
    )
    .option('--nonce <nonce>', 'nonce of the generation in progress (read from the daemon when absent)')
    .argument('[key]', '"-" (stdin, the default) or @file with one key share per line; never the key itself')
    .addHelpText(
      'after',
      '\nVault-style single-dash flags work too (-init, -decode=... -otp=...).\n\nExamples:\n  $ keyhold operator generate-root -init\n  $ keyhold operator generate-root < shares.txt\n  $ keyhold operator generate-root -decode=ENCODED -otp=OTP\n  $ keyhold operator generate-root -init -pgp-key=ops.gpg',
    )
    .action(
      async (
        keyArg: string | undefined,
        opts: {
          init?: boolean;
          cancel?: boolean;
          status?: boolean;
          generateOtp?: boolean;
          otp?: string;
          decode?: string;
          pgpKey?: string;
          nonce?: string;
        },
        cmd: Command,
      ) => {
        const g = ctx.globals(cmd);
        if (opts.generateOtp) {
          let otp = '';
          for (let i = 0; i < OTP_LENGTH; i++) otp += BASE62[randomInt(62)];
          process.stdout.write(otp + '\n');
          return;
        }
        if (opts.decode !== undefined) {
          if (!opts.otp) throw new LocalError('--decode needs --otp (the OTP the generation was started with)');
          const token = decodeRootToken(await ctx.valueOf(opts.decode), await ctx.valueOf(opts.otp));
          if (g.format === 'json' || g.format === 'yaml') return ctx.print(cmd, { token });
          process.stdout.write(token + '\n');
          return;
        }
        const client = ctx.client(cmd);
        if (opts.cancel) {
          await client.request('DELETE', 'sys/generate-root/attempt');
          success('Success! Root token generation canceled (if it was started)');
          return;
        }
        if (opts.status) {
          const res = await client.request('GET', 'sys/generate-root/attempt');
          return ctx.print(cmd, g.format && g.format !== 'table' ? res.body : generateRootView(res.body ?? {}));
        }
        if (opts.init) {
          if (opts.otp && opts.pgpKey) throw new LocalError('give --otp or --pgp-key, not both');
          const body: Record<string, unknown> = {};
          if (opts.otp) body.otp = await ctx.valueOf(opts.otp);
          if (opts.pgpKey) body.pgp_key = pgpKeyArg(opts.pgpKey);
          const res = await client.request('PUT', 'sys/generate-root/attempt', body);
          return ctx.print(cmd, g.format && g.format !== 'table' ? res.body : generateRootView(res.body ?? {}));
        }
        let nonce = opts.nonce;
        if (!nonce) {
          const st = await client.request('GET', 'sys/generate-root/attempt');
          if (!st.body?.started)
            throw new LocalError(
              'no root token generation is in progress: start one with `keyhold operator generate-root -init`',
            );
          nonce = String(st.body.nonce);
        }
        const keys = await readShares(ctx, keyArg, 'Unseal key share (will be hidden): ');
        if (!keys.length) throw new LocalError('give a key share on stdin (one per line)');
        let b: Record<string, unknown> = {};
        for (const key of keys) {
          b = ((await client.request('PUT', 'sys/generate-root/update', { key, nonce })).body ?? {}) as Record<
            string,
            unknown
          >;
          if (b.complete) break;
        }
        await ctx.print(cmd, g.format && g.format !== 'table' ? b : generateRootView(b));
      },
    );

  const snapshot = operator
    .command('snapshot')
    .description('Save, restore and inspect snapshots of the whole store (any storage backend)');
  snapshot
    .command('save')
    .description('Save a point-in-time snapshot of the store to FILE (sudo); writes go on meanwhile')
    .argument('<file>', 'where to write the snapshot (mode 0600)')
    .addHelpText('after', '\nExamples:\n  $ keyhold operator snapshot save backup.snap')
    .action(async (file: string, _o, cmd: Command) => {
      const buf = await binaryRequest(ctx.client(cmd), 'GET', 'sys/storage/raft/snapshot');
      const { decodeSnapshot } = await import('../../storage/snapshot.js');
      const snap = decodeSnapshot(buf);
      const tmp = `${file}.partial`;
      writeFileSync(tmp, buf, { mode: 0o600 });
      renameSync(tmp, file);
      success(`Success! Snapshot saved to ${file} (index ${snap.header.index}, ${snap.manifest.records} records)`);
    });
  snapshot
    .command('restore')
    .description(
      'Restore a snapshot onto the running node (sudo); -force for a snapshot of a store with another keyring (the node then seals)',
    )
    .option('--force', 'restore a snapshot taken from a store with another keyring')
    .argument('<file>', 'snapshot file')
    .addHelpText(
      'after',
      '\nExamples:\n  $ keyhold operator snapshot restore backup.snap\n  $ keyhold operator snapshot restore -force other-store.snap',
    )
    .action(async (file: string, opts: { force?: boolean }, cmd: Command) => {
      const buf = readSnapshotFile(file);
      await binaryRequest(
        ctx.client(cmd),
        'POST',
        opts.force ? 'sys/storage/raft/snapshot-force' : 'sys/storage/raft/snapshot',
        buf,
      );
      success(
        opts.force
          ? "Success! Snapshot restored. If it came from another keyring the node is sealed: unseal it with that store's keys."
          : 'Success! Snapshot restored.',
      );
    });
  snapshot
    .command('inspect')
    .description(
      'Check a snapshot file and show its index, time, keyring term, record count and checksums (no server needed)',
    )
    .argument('<file>', 'snapshot file')
    .addHelpText(
      'after',
      '\nExamples:\n  $ keyhold operator snapshot inspect backup.snap\n  $ keyhold operator snapshot inspect backup.snap --format json',
    )
    .action(async (file: string, _o, cmd: Command) => {
      const { decodeSnapshot, SnapshotError } = await import('../../storage/snapshot.js');
      let snap;
      try {
        snap = decodeSnapshot(readSnapshotFile(file));
      } catch (e) {
        if (e instanceof SnapshotError) throw new LocalError(`${file}: ${e.message}`);
        throw e;
      }
      const h = snap.header;
      const g = ctx.globals(cmd);
      const data = {
        index: h.index,
        created: h.created,
        term: h.term,
        records: snap.manifest.records,
        storage_id: h.storage_id,
        backend: h.backend,
        version: h.version,
        sha256: snap.sha256,
        records_sha256: snap.manifest.records_sha256,
      };
      if (g.format && g.format !== 'table') return ctx.print(cmd, data);
      if (g.field) return ctx.print(cmd, data);
      await ctx.print(cmd, {
        Index: h.index,
        Created: h.created,
        'Keyring Term': h.term,
        Records: snap.manifest.records,
        'Storage ID': h.storage_id,
        Backend: h.backend,
        Version: h.version,
        'SHA-256': snap.sha256,
        'Records SHA-256': snap.manifest.records_sha256,
      });
    });
}
