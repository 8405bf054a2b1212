/**
 * Secret references for `keyhold run` and `keyhold env` (issue 17 part 1): environment values of
 * the form `keyhold://MOUNT/PATH#FIELD` (optionally `?version=N`) resolved from KV. The mount and
 * its KV version come from `sys/internal/ui/mounts/<path>`, as the vault CLI finds them
 * (hashicorp/vault command/kv_helpers.go); v2 reads `MOUNT/data/PATH`, v1 reads `MOUNT/PATH`.
 * All references resolve in one concurrent batch, one read per distinct secret and version.
 * Errors name the variable and the reference, never a value.
 */
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { ApiClient } from './command.js';
import { LocalError, ServerError } from './errors.js';

/** The scheme of a reference. */
export const REF_PREFIX = 'keyhold://';

/** A parsed reference. */
export interface SecretRef {
  /** The environment variable that holds it. */
  variable: string;
  /** The reference text as written (safe to show: it holds no secret). */
  text: string;
  /** Mount and secret path, without leading/trailing slashes. */
  path: string;
  field: string;
  /** Pinned version (KV v2), or undefined for the current one. */
  version?: number;
}

/** Parse one reference; throws a LocalError naming the variable. */
export function parseRef(variable: string, text: string): SecretRef {
  const bad = (why: string) => new LocalError(`${variable}=${text}: ${why}`);
  let rest = text.slice(REF_PREFIX.length);
  let version: number | undefined;
  // `?version=N` may come before the fragment (URL order) or after the field.
  const takeQuery = (s: string): string => {
    const q = s.indexOf('?');
    if (q === -1) return s;
    const params = new URLSearchParams(s.slice(q + 1));
    for (const k of params.keys()) if (k !== 'version') throw bad(`unknown parameter "${k}" (only ?version=N)`);
    const v = params.get('version') ?? '';
    if (!/^[1-9]\d{0,9}$/.test(v)) throw bad('version must be a positive integer');
    version = Number(v);
    return s.slice(0, q);
  };
  const hash = rest.indexOf('#');
  if (hash === -1) throw bad('missing #FIELD (keyhold://MOUNT/PATH#FIELD)');
  const path = takeQuery(rest.slice(0, hash)).replace(/^\/+|\/+$/g, '');
  rest = rest.slice(hash + 1);
  const field = takeQuery(rest);
  if (!field) throw bad('empty field after #');
  if (!path.includes('/')) throw bad('needs a mount and a secret path (keyhold://MOUNT/PATH#FIELD)');
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    throw bad('invalid percent-encoding in the path');
  }
  return { variable, text, path: decoded, field: decodeURIComponent(field), version };
}

/** The references among `env` (values starting with keyhold://). */
export function findRefs(env: Record<string, string | undefined>): SecretRef[] {
  const out: SecretRef[] = [];
  for (const [k, v] of Object.entries(env))
    if (typeof v === 'string' && v.startsWith(REF_PREFIX)) out.push(parseRef(k, v));
  return out;
}

/**
 * Parse a dotenv file: `KEY=value`, optional `export `, `#` comments, single quotes (literal),
 * double quotes (\n \r \t \" \\ escapes, may span lines), unquoted values trimmed with an
 * inline ` #` comment removed. Errors name the file and line, never a value.
 */
export function parseDotenv(text: string, file: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const t = line.trim();
    if (!t || t.startsWith('#')) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*)$/.exec(t);
    if (!m) throw new LocalError(`${file}:${i + 1}: expected KEY=value`);
    const key = m[1]!;
    let v = m[2]!;
    if (v.startsWith("'")) {
      const end = v.indexOf("'", 1);
      if (end === -1) throw new LocalError(`${file}:${i + 1}: unterminated single quote in ${key}`);
      v = v.slice(1, end);
    } else if (v.startsWith('"')) {
      const start = i;
      let body = v.slice(1);
      while (closingQuote(body) === -1) {
        if (++i >= lines.length) throw new LocalError(`${file}:${start + 1}: unterminated double quote in ${key}`);
        body += '\n' + lines[i];
      }
      v = body
        .slice(0, closingQuote(body))
        .replace(/\\([nrt"\\$])/g, (_m, c: string) => ({ n: '\n', r: '\r', t: '\t' })[c as 'n'] ?? c);
    } else {
      v = v.replace(/\s+#.*$/, '').trim();
    }
    out[key] = v;
  }
  return out;
}

function closingQuote(s: string): number {
  for (let j = 0; j < s.length; j++) {
    if (s[j] === '\\') j++;
    else if (s[j] === '"') return j;
  }
  return -1;
}

/** Read and parse a dotenv file (a LocalError names the file). */
export function readDotenv(file: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new LocalError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return parseDotenv(text, file);
}

/** A resolved KV mount. */
interface Mount {
  /** Mount path with trailing slash, e.g. "secret/". */
  path: string;
  version: 1 | 2;
}

/** One secret read: its fields and a fingerprint that changes when the secret does (for --watch). */
export interface SecretRead {
  fields: Record<string, unknown>;
  /** KV v2: the version read; KV v1: 0. */
  version: number;
  /** Changes when the secret changes (v2 version; v1 a hash of the fields). */
  fingerprint: string;
}

/** Resolves references against the daemon, remembering mounts between calls (for --watch). */
export class RefResolver {
  private readonly mounts = new Map<string, Promise<Mount>>();
  constructor(readonly client: ApiClient) {}

  /** The mount of a reference (path with trailing slash, KV version) and the secret path inside it. */
  async locate(ref: SecretRef): Promise<{ mount: string; version: 1 | 2; inner: string }> {
    const m = await this.mountOf(ref.path, ref);
    return { mount: m.path, version: m.version, inner: ref.path.slice(m.path.length).replace(/^\/+/, '') };
  }

  /** The KV mount of `path` (cached; nested mounts cannot exist, so a known prefix decides). */
  private mountOf(path: string, ref: SecretRef): Promise<Mount> {
    for (const [p, m] of this.mounts) if ((path + '/').startsWith(p)) return m;
    const first = path.split('/')[0]! + '/';
    const pending = this.client
      .read(`sys/internal/ui/mounts/${path.split('/').map(encodeURIComponent).join('/')}`)
      .then(
        (res) => {
          const d = (res.body?.data ?? {}) as { path?: string; type?: string; options?: { version?: string } | null };
          if (d.type !== 'kv' || !d.path)
            throw new LocalError(
              `${ref.variable}=${ref.text}: ${d.path ?? first} is not a KV mount (${d.type ?? 'unknown'})`,
            );
          const version = d.options?.version === '2' ? 2 : 1;
          const m: Mount = { path: d.path, version };
          return m;
        },
        (e: unknown) => {
          this.mounts.delete(first);
          throw refError(ref, e, 'no KV mount found (or no access to it)');
        },
      );
    // Keyed by the answer's mount path once known; until then by the first segment.
    this.mounts.set(first, pending);
    pending.then(
      (m) => {
        if (m.path !== first) {
          this.mounts.delete(first);
          this.mounts.set(m.path, Promise.resolve(m));
        }
      },
      () => undefined,
    );
    return pending;
  }

  /** Read one secret (current or pinned version). */
  async read(ref: SecretRef): Promise<SecretRead> {
    const mount = await this.mountOf(ref.path, ref);
    const inner = ref.path.slice(mount.path.length).replace(/^\/+/, '');
    if (!inner) throw new LocalError(`${ref.variable}=${ref.text}: names the mount ${mount.path}, not a secret in it`);
    const enc = inner.split('/').map(encodeURIComponent).join('/');
    const mp = mount.path.split('/').filter(Boolean).map(encodeURIComponent).join('/');
    if (mount.version === 1 && ref.version !== undefined)
      throw new LocalError(
        `${ref.variable}=${ref.text}: ?version applies to KV version 2 mounts; ${mount.path} is version 1`,
      );
    let res;
    try {
      res =
        mount.version === 2
          ? await this.client.read(`${mp}/data/${enc}`, ref.version ? { version: String(ref.version) } : undefined)
          : await this.client.read(`${mp}/${enc}`);
    } catch (e) {
      throw refError(ref, e, `no secret at ${ref.path}${ref.version ? ` version ${ref.version}` : ''}`);
    }
    const data = (res.body?.data ?? null) as Record<string, unknown> | null;
    if (mount.version === 2) {
      const fields = (data?.data ?? null) as Record<string, unknown> | null;
      const meta = (data?.metadata ?? {}) as { version?: number; deletion_time?: string; destroyed?: boolean };
      if (!fields)
        throw new LocalError(
          `${ref.variable}=${ref.text}: secret ${ref.path} version ${meta.version ?? '?'} is ${meta.destroyed ? 'destroyed' : 'deleted'}`,
        );
      return { fields, version: meta.version ?? 0, fingerprint: `v${meta.version ?? 0}` };
    }
    if (!data) throw new LocalError(`${ref.variable}=${ref.text}: no secret at ${ref.path}`);
    return { fields: data, version: 0, fingerprint: createHash('sha256').update(JSON.stringify(data)).digest('hex') };
  }
}

/** A server error while resolving, named by the reference (403 says so; 404 says what is missing). */
function refError(ref: SecretRef, e: unknown, notFoundText: string): Error {
  if (e instanceof ServerError) {
    const why = e.status === 403 ? 'permission denied' : e.status === 404 ? notFoundText : e.message;
    return new ServerError(e.status, [`${ref.variable}=${ref.text}: ${why}`], null);
  }
  if (e instanceof LocalError && e.message.startsWith(`${ref.variable}=`)) return e;
  return e instanceof Error ? e : new Error(String(e));
}

/** Key of one read: secret path and version. */
const readKey = (r: SecretRef) => `${r.path}\u0000${r.version ?? ''}`;

/** Resolved values per variable, and per read the fingerprint (for --watch). */
export interface Resolution {
  values: Record<string, string>;
  fingerprints: Map<string, string>;
}

/** A field's value as an environment string: strings as they are, anything else as JSON. */
function asEnv(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * Resolve every reference in one concurrent batch (one read per distinct secret and version).
 * Any failure stops everything: the first error in reference order is thrown.
 */
export async function resolveRefs(resolver: RefResolver, refs: SecretRef[]): Promise<Resolution> {
  const reads = new Map<string, Promise<SecretRead>>();
  for (const r of refs) if (!reads.has(readKey(r))) reads.set(readKey(r), resolver.read(r));
  const settled = new Map<string, PromiseSettledResult<SecretRead>>();
  await Promise.all(
    [...reads].map(async ([k, p]) =>
      settled.set(
        k,
        await p.then(
          (value) => ({ status: 'fulfilled' as const, value }),
          (reason: unknown) => ({ status: 'rejected' as const, reason }),
        ),
      ),
    ),
  );
  const values: Record<string, string> = {};
  const fingerprints = new Map<string, string>();
  for (const r of refs) {
    const s = settled.get(readKey(r))!;
    if (s.status === 'rejected') throw s.reason;
    const { fields, fingerprint } = s.value;
    if (!Object.hasOwn(fields, r.field))
      throw new LocalError(`${r.variable}=${r.text}: field "${r.field}" not in secret ${r.path}`);
    values[r.variable] = asEnv(fields[r.field]);
    if (r.version === undefined) fingerprints.set(readKey(r), fingerprint);
  }
  return { values, fingerprints };
}

/** Render a set of variables for `keyhold env`: dotenv, json or shell. */
export function renderEnv(vars: Record<string, string>, format: 'dotenv' | 'json' | 'shell'): string {
  const names = Object.keys(vars).sort();
  if (format === 'json') return JSON.stringify(Object.fromEntries(names.map((k) => [k, vars[k]])), null, 2) + '\n';
  if (format === 'shell') return names.map((k) => `export ${k}='${vars[k]!.replace(/'/g, `'\\''`)}'\n`).join('');
  return names.map((k) => `${k}=${dotenvQuote(vars[k]!)}\n`).join('');
}

/** A dotenv value: bare when plain, else double-quoted with \\ \" \n \r \t escaped (what parseDotenv reads back). */
function dotenvQuote(v: string): string {
  if (/^[A-Za-z0-9_./:@+,=-]*$/.test(v)) return v;
  return (
    '"' +
    v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t') +
    '"'
  );
}
