/**
 * The managed-key registry behind `sys/managed-keys` (reference managed-keys-wire.md section 1):
 * configurations stored behind the barrier (PIN and AWS secret included, never returned or logged),
 * names unique across types, an id (`UUID`) per key, mount permission (`any_mount` or the mount's
 * `allowed_managed_keys`), a usage index so a key in use cannot be deleted, and the live KmsKey of
 * each configuration, opened on first use (generated when `allow_generate_key` and missing).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Logger, ManagedKeys, MountInfo } from '../framework/context.js';
import { invalid, notFound } from '../framework/errors.js';
import type { Storage } from '../storage/backend.js';
import { NetworkGuard } from '../sync/network-guard.js';
import { openAwsKmsKey } from './awskms/awskms-key.js';
import { CURVES, mechanismOf } from './mechanisms.js';
import { Pkcs11Library } from './pkcs11/pkcs11-library.js';
import { keyIdBytes, openPkcs11Key } from './pkcs11/pkcs11-key.js';
import type { KmsHash, KmsKey } from '../framework/kms-key.js';

/** A `kms_library` stanza of the server config. */
export interface KmsLibraryConfig {
  type: 'pkcs11';
  name: string;
  library: string;
}

/** Managed-key backend types keyhold implements. */
export const MANAGED_KEY_TYPES = ['pkcs11', 'awskms'] as const;
/** A managed-key backend type. */
export type ManagedKeyType = (typeof MANAGED_KEY_TYPES)[number];

/** Refuse a key the mount may not use (neither any_mount nor listed in its allowed_managed_keys). */
function checkMount(r: ManagedKeyRecord, mount: MountInfo): void {
  if (!r.fields.any_mount && !allowedOn(mount).includes(r.name)) {
    throw invalid(
      `managed key "${r.name}" is not allowed on mount ${mount.path}: add it to the mount's allowed_managed_keys or set any_mount on the key`,
    );
  }
}

/** The usages Vault knows (reference 1.2). */
export const USAGES = ['encrypt', 'decrypt', 'sign', 'verify', 'wrap', 'unwrap', 'mac', 'generate_random'] as const;
/** What an operation needs from `usages`. */
export type Usage = (typeof USAGES)[number];

/** The stored configuration of one managed key. */
export interface ManagedKeyRecord {
  type: ManagedKeyType;
  name: string;
  uuid: string;
  /** Normalised fields (snake_case, as written); secrets included (behind the barrier only). */
  fields: Record<string, unknown>;
}

/** Vault's GenericNameRegex (reference 1.1). */
const NAME_RE = /^\w(([\w.-]+)?\w)?$/;
const SECRET_FIELDS = ['pin', 'access_key', 'secret_key'];
const CONFIG = 'config/';
const USAGE = 'usage/';

const isEmpty = (v: unknown) => v === undefined || v === null || v === '';

function str(raw: Record<string, unknown>, k: string): string | undefined {
  const v = raw[k];
  if (isEmpty(v)) return undefined;
  if (typeof v !== 'string' && typeof v !== 'number') throw invalid(k, 'must be a string');
  return String(v);
}

function bool(raw: Record<string, unknown>, k: string, dflt = false): boolean {
  const v = raw[k];
  if (isEmpty(v)) return dflt;
  if (v === true || v === 'true' || v === '1' || v === 1) return true;
  if (v === false || v === 'false' || v === '0' || v === 0) return false;
  throw invalid(k, 'must be a boolean');
}

function int(raw: Record<string, unknown>, k: string, dflt = 0): number {
  const v = raw[k];
  if (isEmpty(v)) return dflt;
  const n = typeof v === 'number' ? v : /^\d+$/.test(String(v)) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw invalid(k, 'must be a non-negative integer');
  return n;
}

function usagesOf(raw: Record<string, unknown>, dflt: Usage[]): Usage[] {
  const v = raw.usages;
  if (isEmpty(v) || (Array.isArray(v) && v.length === 0)) return dflt;
  const list = (Array.isArray(v) ? v.map(String) : String(v).split(','))
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  for (const u of list)
    if (!(USAGES as readonly string[]).includes(u))
      throw invalid('usages', `unknown usage "${u}"; allowed: ${USAGES.join(', ')}`);
  return [...new Set(list)] as Usage[];
}

const OAEP_HASHES: Record<string, KmsHash> = {
  sha1: 'sha1',
  sha224: 'sha224',
  sha256: 'sha256',
  sha384: 'sha384',
  sha512: 'sha512',
};

/** The managed-key registry of one daemon. */
export class ManagedKeyRegistry implements ManagedKeys {
  private readonly libraries = new Map<string, Pkcs11Library>();
  private readonly open = new Map<string, Promise<KmsKey>>();
  private records: Map<string, ManagedKeyRecord> | null = null;

  constructor(
    private readonly storage: Storage,
    libraries: readonly KmsLibraryConfig[],
    private readonly mounts: () => MountInfo[],
    private readonly logger: Logger,
  ) {
    for (const l of libraries)
      this.libraries.set(l.name.toLowerCase(), new Pkcs11Library(l.name.toLowerCase(), l.library, logger));
  }

  /** Names of the configured PKCS#11 libraries. */
  libraryNames(): string[] {
    return [...this.libraries.keys()];
  }

  /** The loaded library by `kms_library` name (tests read its stats). */
  library(name: string): Pkcs11Library | undefined {
    return this.libraries.get(name);
  }

  private async all(): Promise<Map<string, ManagedKeyRecord>> {
    if (this.records) return this.records;
    const m = new Map<string, ManagedKeyRecord>();
    for (const n of await this.storage.list(CONFIG)) {
      const b = await this.storage.get(CONFIG + n);
      if (b) {
        const r = JSON.parse(b.toString('utf8')) as ManagedKeyRecord;
        m.set(r.name, r);
      }
    }
    this.records = m;
    return m;
  }

  /** Drop cached records (another node changed storage). */
  invalidate(): void {
    this.records = null;
    for (const uuid of [...this.open.keys()]) this.drop(uuid);
  }

  private checkType(type: string): ManagedKeyType {
    if (!(MANAGED_KEY_TYPES as readonly string[]).includes(type))
      throw invalid('type', `unsupported managed key type "${type}"; supported: ${MANAGED_KEY_TYPES.join(', ')}`);
    return type as ManagedKeyType;
  }

  /** Names of one type's keys. */
  async list(type: string): Promise<string[]> {
    const t = this.checkType(type);
    return [...(await this.all()).values()]
      .filter((r) => r.type === t)
      .map((r) => r.name)
      .sort();
  }

  /** A record by type and name, or 404. */
  async get(type: string, name: string): Promise<ManagedKeyRecord> {
    const t = this.checkType(type);
    const r = (await this.all()).get(name.toLowerCase());
    if (!r || r.type !== t) throw notFound();
    return r;
  }

  /** The read view: secrets `"redacted"`, id as upper-case `UUID`, numbers as numbers (reference 1.6). */
  view(r: ManagedKeyRecord): Record<string, unknown> {
    const out: Record<string, unknown> = { UUID: r.uuid, name: r.name, type: r.type };
    for (const [k, v] of Object.entries(r.fields))
      out[k] = SECRET_FIELDS.includes(k) ? (isEmpty(v) ? '' : 'redacted') : v;
    if (r.type === 'pkcs11') {
      // Slot ids can exceed 2^53 (reference 1.6): a number when exact, else the decimal string.
      const slot = r.fields.slot as string | undefined;
      out.slot = slot === undefined ? 0 : Number.isSafeInteger(Number(slot)) ? Number(slot) : slot;
      out.mechanism = mechanismOf(String(r.fields.mechanism))!.value;
    }
    return out;
  }

  /** Create or update a managed key from request fields (secrets kept when omitted on update). */
  async write(type: string, nameIn: string, raw: Record<string, unknown>): Promise<ManagedKeyRecord> {
    const t = this.checkType(type);
    const name = nameIn.toLowerCase();
    if (!NAME_RE.test(name))
      throw invalid('name', 'must match [a-z0-9_.-] and start and end with a letter, digit or _');
    const all = await this.all();
    const old = all.get(name);
    if (old && old.type !== t)
      throw invalid('name', `a managed key named "${name}" already exists with type ${old.type}`);
    const merged: Record<string, unknown> = {
      ...(old?.fields ?? {}),
      ...Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined)),
    };
    for (const s of SECRET_FIELDS) if (isEmpty(raw[s]) && old) merged[s] = old.fields[s];
    const fields = t === 'pkcs11' ? this.pkcs11Fields(merged) : awsFields(merged);
    const rec: ManagedKeyRecord = { type: t, name, uuid: old?.uuid ?? randomUUID(), fields };
    await this.storage.put(CONFIG + name, Buffer.from(JSON.stringify(rec), 'utf8'));
    all.set(name, rec);
    this.drop(rec.uuid);
    this.logger.info('managed key written', { type: t, name, uuid: rec.uuid });
    return rec;
  }

  private pkcs11Fields(raw: Record<string, unknown>): Record<string, unknown> {
    const library = str(raw, 'library');
    if (!library) throw invalid('library', 'is required (the name of a kms_library stanza of the server config)');
    if (!this.libraries.has(library.toLowerCase())) {
      const have = this.libraryNames();
      throw invalid(
        'library',
        `no kms_library named "${library}" in the server config${have.length ? ` (configured: ${have.join(', ')})` : ''}`,
      );
    }
    const slot = str(raw, 'slot');
    if (slot !== undefined && !/^\d{1,20}$/.test(slot)) throw invalid('slot', 'must be a decimal slot id');
    const tokenLabel = str(raw, 'token_label');
    if (slot === undefined && tokenLabel === undefined) throw invalid('slot', 'slot or token_label is required');
    const pin = str(raw, 'pin');
    if (!pin) throw invalid('pin', 'is required');
    const keyLabel = str(raw, 'key_label');
    const keyId = str(raw, 'key_id');
    if (!keyLabel && !keyId) throw invalid('key_label', 'key_label or key_id is required');
    const mechText = str(raw, 'mechanism');
    if (!mechText) throw invalid('mechanism', 'is required (0x0001, 0x000D, 0x0009, 0x1041 or 0x1087)');
    const mech = mechanismOf(mechText);
    if (!mech)
      throw invalid(
        'mechanism',
        `unsupported mechanism ${mechText}; supported: 0x0001 (RSA PKCS#1), 0x000D (RSA PSS), 0x0009 (RSA OAEP), 0x1041 (ECDSA), 0x1087 (AES-GCM)`,
      );
    const keyBits = int(raw, 'key_bits');
    if (keyBits && mech.kind === 'rsa' && ![2048, 3072, 4096].includes(keyBits))
      throw invalid('key_bits', 'must be 2048, 3072 or 4096');
    const curve = (str(raw, 'curve') ?? '').toUpperCase().replace('-', '');
    if (curve && !CURVES.some((c) => c.name === curve)) throw invalid('curve', 'must be P256, P384 or P521');
    const generate = bool(raw, 'allow_generate_key');
    if (generate && mech.kind === 'rsa' && !keyBits) throw invalid('key_bits', 'is required to generate an RSA key');
    if (generate && mech.kind === 'ec' && !curve) throw invalid('curve', 'is required to generate an EC key');
    const maxParallel = int(raw, 'max_parallel', 1);
    if (maxParallel < 1 || maxParallel > 1024) throw invalid('max_parallel', 'must be between 1 and 1024');
    const oaep = (str(raw, 'rsa_oaep_hash') ?? 'sha256').toLowerCase().replace('sha2-', 'sha');
    if (!OAEP_HASHES[oaep]) throw invalid('rsa_oaep_hash', 'must be sha1, sha224, sha256, sha384 or sha512');
    const dflt: Usage[] =
      mech.kind === 'aes'
        ? ['encrypt', 'decrypt', 'wrap', 'unwrap']
        : mech.encrypt
          ? ['encrypt', 'decrypt', 'sign', 'verify']
          : ['sign', 'verify'];
    if (keyId && !/^0x([0-9a-f]{2})+$/i.test(keyId) && keyIdBytes(keyId).length > 128)
      throw invalid('key_id', 'is too long');
    return {
      library: library.toLowerCase(),
      slot,
      token_label: tokenLabel ?? '',
      pin,
      key_label: keyLabel ?? '',
      key_id: keyId ?? '',
      mechanism: `0x${mech.value.toString(16).padStart(4, '0').toUpperCase()}`,
      key_bits: keyBits,
      curve,
      force_rw_session: bool(raw, 'force_rw_session'),
      max_parallel: maxParallel,
      rsa_oaep_hash: oaep,
      usages: usagesOf(raw, dflt),
      ...genericFields(raw),
    };
  }

  /** Delete; refused while a mount lists the key or a transit key uses it (reference 1.9). */
  async delete(type: string, name: string): Promise<void> {
    const r = await this.get(type, name).catch(() => null);
    if (!r) return;
    const listing = this.mounts()
      .filter((m) => allowedOn(m).includes(r.name))
      .map((m) => m.path);
    if (listing.length)
      throw invalid(
        `managed key "${r.name}" is in use: listed in allowed_managed_keys of mount(s) ${listing.join(', ')}`,
      );
    const users = await this.users(r.uuid);
    if (users.length)
      throw invalid(
        `managed key "${r.name}" is in use by transit key(s) ${users.slice(0, 5).join(', ')}${users.length > 5 ? ' ...' : ''}`,
      );
    await this.storage.delete(CONFIG + r.name);
    (await this.all()).delete(r.name);
    this.drop(r.uuid);
    this.logger.info('managed key deleted', { type: r.type, name: r.name });
  }

  /** `mount:key` names of transit keys still using a managed key (entries of unmounted mounts are ignored). */
  async users(uuid: string): Promise<string[]> {
    const live = new Map(this.mounts().map((m) => [m.uuid, m.path]));
    const out: string[] = [];
    for (const entry of await this.storage.list(`${USAGE}${uuid}/`)) {
      const [mount, ...rest] = entry.split('~');
      const path = live.get(mount!);
      if (path) out.push(`${path}${decodeURIComponent(rest.join('~'))}`);
    }
    return out;
  }

  /** Record that transit key `keyName` of `mount` uses managed key `uuid`. */
  async markUsed(uuid: string, mount: MountInfo, keyName: string): Promise<void> {
    await this.storage.put(`${USAGE}${uuid}/${mount.uuid}~${encodeURIComponent(keyName)}`, Buffer.from('1'));
  }

  /** Forget a use (the transit key was deleted). */
  async unmarkUsed(uuid: string, mount: MountInfo, keyName: string): Promise<void> {
    await this.storage.delete(`${USAGE}${uuid}/${mount.uuid}~${encodeURIComponent(keyName)}`);
  }

  /** Resolve a name or UUID for use from `mount` (permission checked). */
  async resolve(ref: { name?: string; id?: string }, mount: MountInfo): Promise<ManagedKeyRecord> {
    const all = await this.all();
    let r: ManagedKeyRecord | undefined;
    if (ref.id) r = [...all.values()].find((x) => x.uuid === ref.id);
    else if (ref.name) r = all.get(ref.name.toLowerCase());
    else
      throw invalid('managed_key_name', 'managed_key_name or managed_key_id is required for keys of type managed_key');
    if (!r)
      throw ref.id
        ? invalid('managed_key_id', `no managed key found with uuid ${ref.id}`)
        : invalid('managed_key_name', `no managed key found with name ${ref.name}`);
    checkMount(r, mount);
    return r;
  }

  /**
   * The live key behind a transit key version, for use from `mount`: the record by UUID and the
   * mount's permission are checked on every use (a tune that drops the key takes effect at once),
   * without a promise turn while the records are loaded (this is on every managed-key request).
   */
  keyFor(uuid: string, mount: MountInfo, usage?: Usage): Promise<KmsKey> {
    const all = this.records;
    if (!all) return this.all().then(() => this.keyFor(uuid, mount, usage));
    let r: ManagedKeyRecord | undefined;
    for (const x of all.values()) {
      if (x.uuid === uuid) {
        r = x;
        break;
      }
    }
    if (!r) return Promise.reject(invalid(`the managed key ${uuid} of this key no longer exists`));
    try {
      checkMount(r, mount);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.key(r, usage);
  }

  /** The record of a UUID, or null (for showing names). */
  async byUuid(uuid: string): Promise<ManagedKeyRecord | null> {
    return [...(await this.all()).values()].find((x) => x.uuid === uuid) ?? null;
  }

  /** The live key of a record, opened (and generated when allowed) on first use. */
  key(r: ManagedKeyRecord, usage?: Usage): Promise<KmsKey> {
    if (usage && !(r.fields.usages as Usage[]).includes(usage))
      return Promise.reject(
        invalid(
          `managed key "${r.name}" does not allow usage "${usage}" (usages: ${(r.fields.usages as string[]).join(',')})`,
        ),
      );
    let p = this.open.get(r.uuid);
    if (!p) {
      p = this.openKey(r);
      this.open.set(r.uuid, p);
      // A failed open (HSM down, wrong PIN) is retried on the next call.
      p.catch(() => {
        if (this.open.get(r.uuid) === p) this.open.delete(r.uuid);
      });
    }
    return p;
  }

  private async openKey(r: ManagedKeyRecord): Promise<KmsKey> {
    const f = r.fields;
    if (r.type === 'pkcs11') {
      const lib = this.libraries.get(String(f.library));
      if (!lib) throw invalid('library', `no kms_library named "${String(f.library)}" in the server config`);
      const key = await openPkcs11Key({
        library: lib,
        slot: f.slot as string | undefined,
        tokenLabel: (f.token_label as string) || undefined,
        pin: String(f.pin),
        keyLabel: (f.key_label as string) || undefined,
        keyId: (f.key_id as string) || undefined,
        mechanism: String(f.mechanism),
        keyBits: (f.key_bits as number) || undefined,
        curve: (f.curve as string) || undefined,
        generate: Boolean(f.allow_generate_key),
        forceRwSession: Boolean(f.force_rw_session),
        maxParallel: Number(f.max_parallel ?? 1),
        rsaOaepHash: OAEP_HASHES[String(f.rsa_oaep_hash ?? 'sha256')],
      });
      if (key.facts.generated)
        this.logger.info('managed key generated in the HSM', {
          name: r.name,
          label: key.facts.label,
          id: Buffer.from(key.facts.id).toString('hex'),
        });
      return key;
    }
    return openAwsKmsKey({
      accessKey: (f.access_key as string) || undefined,
      secretKey: (f.secret_key as string) || undefined,
      region: (f.region as string) || undefined,
      endpoint: (f.endpoint as string) || undefined,
      kmsKey: String(f.kms_key),
      keyType: f.key_type as 'RSA' | 'ECDSA' | 'AES',
      keyBits: (f.key_bits as number) || undefined,
      curve: (f.curve as string) || undefined,
      generate: Boolean(f.allow_generate_key),
      network: {
        disable_strict_networking: Boolean(f.disable_strict_networking),
        allowed_ipv4_addresses: f.allowed_ipv4_addresses as string[],
        allowed_ipv6_addresses: f.allowed_ipv6_addresses as string[],
        allowed_ports: f.allowed_ports as number[],
      },
    });
  }

  private drop(uuid: string): void {
    const p = this.open.get(uuid);
    this.open.delete(uuid);
    p?.then((k) => k.close()).catch(() => undefined);
  }

  /** `test/sign`: sign 32 random bytes and verify the signature (reference 1.7). */
  async testSign(type: string, name: string, o: { usePss: boolean; hash: KmsHash }): Promise<void> {
    const r = await this.get(type, name);
    const key = await this.key(r);
    if (!key.capabilities.sign) throw invalid(`managed key "${r.name}" cannot sign (${key.kind} key)`);
    // A random message and its digest: AWS KMS signs the message (MessageType RAW), PKCS#11 the digest.
    const message = randomBytes(32);
    const digest = createHash(o.hash).update(message).digest();
    const opts = {
      hash: o.hash,
      padding: key.kind === 'rsa' ? (o.usePss ? ('pss' as const) : ('pkcs1v15' as const)) : undefined,
    };
    const sig = await key.sign(digest, { ...opts, message });
    if (!(await key.verify(digest, sig, opts)))
      throw invalid(`managed key "${r.name}": the signature made by the key did not verify with its public key`);
  }

  /** Close every key and library worker. */
  async close(): Promise<void> {
    for (const uuid of [...this.open.keys()]) this.drop(uuid);
    await Promise.all([...this.libraries.values()].map((l) => l.close()));
  }
}

/** The mount's `allowed_managed_keys` (array or comma string). */
export function allowedOn(m: MountInfo): string[] {
  const v = m.config.allowed_managed_keys;
  if (Array.isArray(v)) return v.map((x) => String(x).toLowerCase());
  return [];
}

function genericFields(raw: Record<string, unknown>): Record<string, unknown> {
  return {
    allow_generate_key: bool(raw, 'allow_generate_key'),
    allow_replace_key: bool(raw, 'allow_replace_key'),
    allow_store_key: bool(raw, 'allow_store_key'),
    any_mount: bool(raw, 'any_mount'),
  };
}

function awsFields(raw: Record<string, unknown>): Record<string, unknown> {
  const kmsKey = str(raw, 'kms_key');
  if (!kmsKey) throw invalid('kms_key', 'is required (key id, ARN or alias/...)');
  const keyType = (str(raw, 'key_type') ?? '').toUpperCase();
  if (!['RSA', 'ECDSA', 'AES'].includes(keyType)) throw invalid('key_type', 'must be RSA, ECDSA or AES');
  const keyBits = int(raw, 'key_bits');
  if (keyType === 'RSA' && ![2048, 3072, 4096].includes(keyBits))
    throw invalid('key_bits', 'must be 2048, 3072 or 4096 for key_type RSA');
  const curve = (str(raw, 'curve') ?? '').toUpperCase().replace('-', '');
  if (curve && !CURVES.some((c) => c.name === curve)) throw invalid('curve', 'must be P256, P384 or P521');
  const generic = genericFields(raw);
  if (generic.allow_generate_key && !kmsKey.startsWith('alias/'))
    throw invalid('kms_key', 'must be an alias (alias/...) when allow_generate_key is set');
  if (generic.allow_generate_key && keyType === 'ECDSA' && !curve)
    throw invalid('curve', 'is required to generate an ECDSA key');
  const endpoint = str(raw, 'endpoint');
  if (endpoint) {
    try {
      const u = new URL(endpoint);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    } catch {
      throw invalid('endpoint', 'must be an http(s) URL');
    }
  }
  const list = (k: string): string[] => {
    const v = raw[k];
    if (isEmpty(v)) return [];
    return (Array.isArray(v) ? v.map(String) : String(v).split(',')).map((s) => s.trim()).filter(Boolean);
  };
  const ports = list('allowed_ports').map((p) => {
    const n = Number(p);
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw invalid('allowed_ports', `invalid port ${p}`);
    return n;
  });
  // Checked now so a bad CIDR is a 400 at write time, naming the field.
  new NetworkGuard({
    disable_strict_networking: false,
    allowed_ipv4_addresses: list('allowed_ipv4_addresses'),
    allowed_ipv6_addresses: list('allowed_ipv6_addresses'),
    allowed_ports: ports,
  });
  return {
    access_key: str(raw, 'access_key') ?? '',
    secret_key: str(raw, 'secret_key') ?? '',
    region: str(raw, 'region') ?? 'us-east-1',
    endpoint: endpoint ?? '',
    kms_key: kmsKey,
    key_type: keyType,
    key_bits: keyBits,
    curve,
    usages: usagesOf(raw, keyType === 'AES' ? ['encrypt', 'decrypt', 'wrap', 'unwrap'] : ['sign', 'verify']),
    disable_strict_networking: bool(raw, 'disable_strict_networking'),
    allowed_ipv4_addresses: list('allowed_ipv4_addresses'),
    allowed_ipv6_addresses: list('allowed_ipv6_addresses'),
    allowed_ports: ports,
    ...generic,
  };
}
