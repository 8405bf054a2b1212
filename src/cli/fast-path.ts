/**
 * The fast path for the commands scripts call in loops: `keyhold transit encrypt NAME`,
 * `keyhold transit decrypt NAME [CIPHERTEXT]`, `keyhold status` and `keyhold --version`. Loading
 * commander and every route table costs more than Node's own start-up, so when argv holds only the
 * flags below we answer with the bare client and skip the full program. Anything else (help, other
 * flags, envelope mode) returns false and the full CLI runs, so behaviour is the same either way
 * (test/integration/cli-fast-path.test.ts compares both; KEYHOLD_NO_FAST_PATH=1 turns it off).
 * bin/keyhold.js loads this file bundled into one CommonJS file (scripts/bundle-cli.mjs).
 */
import { LocalError, ServerError } from './errors.js';
import { postJson, rawRequest } from './raw-request.js';
import { VERSION } from '../version.js';
import { resolveAddress, resolveToken } from './settings.js';
import { table } from './table.js';
import { installCliProcessHooks } from './signals.js';

interface FastArgs {
  op: 'encrypt' | 'decrypt' | 'status' | 'version';
  name: string;
  ciphertext?: string;
  field?: string;
  format?: string;
  mount: string;
  base64: boolean;
  file?: string;
  address?: string;
  token?: string;
}

const VALUE_FLAGS = new Set(['--field', '--format', '--mount', '--file', '--address', '--token']);

/** Parse argv for the fast path; null when the full CLI must handle it. */
export function parseFast(argv: string[]): FastArgs | null {
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v'))
    return { op: 'version', name: '', mount: 'transit', base64: false };
  const status = argv[0] === 'status';
  if (!status && (argv[0] !== 'transit' || (argv[1] !== 'encrypt' && argv[1] !== 'decrypt'))) return null;
  const op = status ? 'status' : (argv[1] as 'encrypt' | 'decrypt');
  const positional: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = status ? 1 : 2; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return null;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq === -1 ? a : a.slice(0, eq);
      if (name === '--base64') {
        if (eq !== -1) return null;
        flags.base64 = true;
        continue;
      }
      if (!VALUE_FLAGS.has(name)) return null;
      const value = eq === -1 ? argv[++i] : a.slice(eq + 1);
      if (value === undefined || name.slice(2) in flags) return null;
      flags[name.slice(2)] = value;
    } else if (a.startsWith('-') && a !== '-') return null;
    else positional.push(a);
  }
  const format = flags.format as string | undefined;
  if (format !== undefined && !['table', 'json', 'raw'].includes(format)) return null;
  if (op === 'status') {
    // Global flags only: --mount, --file and --base64 belong to transit and are usage errors here.
    if (positional.length || flags.mount !== undefined || flags.file !== undefined || flags.base64) return null;
    return {
      op,
      name: '',
      field: flags.field as string | undefined,
      format,
      mount: 'transit',
      base64: false,
      address: flags.address as string | undefined,
      token: flags.token as string | undefined,
    };
  }
  if (op === 'encrypt' && positional.length !== 1) return null;
  if (op === 'decrypt' && (positional.length < 1 || positional.length > 2 || flags.file !== undefined)) return null;
  return {
    op,
    name: positional[0]!,
    ciphertext: positional[1],
    field: flags.field as string | undefined,
    format,
    mount: String(flags.mount ?? 'transit').replace(/^\/+|\/+$/g, ''),
    base64: flags.base64 === true,
    file: flags.file as string | undefined,
    address: flags.address as string | undefined,
    token: flags.token as string | undefined,
  };
}

function readStdin(): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (c: Buffer) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks)));
    process.stdin.on('error', reject);
  });
}

function write(data: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(data, (e) => (e ? reject(e) : resolve())));
}

async function print(data: Record<string, unknown>, a: FastArgs): Promise<void> {
  if (a.field) {
    const v = a.field
      .split('.')
      .reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), data);
    if (v === undefined) throw new LocalError(`field "${a.field}" not present in the response`);
    return write(typeof v === 'string' ? v : JSON.stringify(v));
  }
  if (a.format === 'json') return write(JSON.stringify(data, null, 2) + '\n');
  if (a.format === 'raw') return write(JSON.stringify(data));
  return write(table(data));
}

async function run(a: FastArgs, address: string): Promise<void> {
  const token = resolveToken({ token: a.token });
  if (a.op === 'status') {
    // As the full CLI's `status`: the whole answer (sys/seal-status is not enveloped), exit 2 when sealed.
    const res = (await rawRequest('GET', address, 'sys/seal-status', token)) ?? {};
    // HA fields as `vault status` shows them (from sys/leader), as the full CLI's `status` adds them.
    if (!res.sealed) {
      const leader = (await rawRequest('GET', address, 'sys/leader', token).catch(() => null)) as Record<
        string,
        unknown
      > | null;
      res.ha_enabled = leader?.ha_enabled === true;
      if (leader?.ha_enabled) {
        res.ha_cluster = leader.leader_cluster_address || 'n/a';
        res.ha_mode = leader.is_self ? 'active' : 'standby';
        if (leader.is_self) res.active_since = leader.active_time;
        res.active_node_address = leader.leader_address || '<none>';
      }
    }
    await print(res, a);
    if (res.sealed) process.exitCode = 2;
    return;
  }
  const path = `${a.mount}/${a.op}/${encodeURIComponent(a.name)}`;
  if (a.op === 'encrypt') {
    let input: Buffer;
    if (a.file) {
      const { readFile } = await import('node:fs/promises');
      try {
        input = await readFile(a.file);
      } catch (e) {
        throw new LocalError(`cannot read ${a.file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
    } else input = await readStdin();
    let plaintext = input.toString('base64');
    if (a.base64) {
      plaintext = input.toString('utf8').replace(/\s+/g, '');
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(plaintext) || plaintext.length % 4 !== 0)
        throw new LocalError('--base64: input is not valid base64');
    }
    const res = await postJson(address, path, token, { plaintext }).catch((e: unknown) => {
      if ((e as { status?: number }).status === 413)
        process.stderr.write('hint: the input exceeds the request size limit; use --envelope for large data\n');
      throw e;
    });
    return print((res?.data ?? {}) as Record<string, unknown>, a);
  }
  const ciphertext = a.ciphertext && a.ciphertext !== '-' ? a.ciphertext : (await readStdin()).toString('utf8').trim();
  if (!ciphertext) throw new LocalError('no ciphertext given (argument or stdin)');
  const res = await postJson(address, path, token, { ciphertext });
  const data = (res?.data ?? {}) as Record<string, unknown>;
  if (a.field || (a.format && a.format !== 'raw')) return print(data, a);
  const pt = String(data.plaintext ?? '');
  return write(a.base64 ? pt + '\n' : Buffer.from(pt, 'base64'));
}

/** Run `argv` on the fast path; false (having done nothing) when the full CLI must handle it. */
export async function runFast(argv: string[]): Promise<boolean> {
  if (process.env.KEYHOLD_NO_FAST_PATH === '1') return false;
  const a = parseFast(argv);
  if (!a) return false;
  installCliProcessHooks();
  if (a.op === 'version') {
    await write(VERSION + '\n');
    return true;
  }
  const address = resolveAddress({ address: a.address });
  // https (TLS, CA files) and unusual addresses go through the full client.
  if (!address.startsWith('unix://') && !address.startsWith('http://')) return false;
  try {
    await run(a, address);
  } catch (e) {
    process.exitCode = e instanceof ServerError ? 2 : 1;
    const { errorLine } = await import('./error-line.js');
    process.stderr.write(errorLine(e) + '\n');
  }
  return true;
}
