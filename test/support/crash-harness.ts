/**
 * Crash harness: a non-dev daemon on file storage, a mixed load of writes whose acknowledgements are
 * recorded in a ledger, SIGKILL at a random moment, restart on the same storage, and a check that
 * every acknowledged write survived, that writes in flight at the kill are either wholly there or
 * wholly absent, and that every ciphertext issued before the kill still decrypts.
 */
import { randomBytes } from 'node:crypto';
import { startDaemon, type Answer, type Daemon } from './daemon.js';

/** A small seeded PRNG (mulberry32) so a failing run can be replayed from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Start a non-dev daemon on file storage under `dir` (no keychain: unseal with the recovery key). */
export function startFileDaemon(dir?: string, args: string[] = [], env?: Record<string, string>): Promise<Daemon> {
  return startDaemon({ dev: false, args: ['--keychain', 'none', ...args], dir, env });
}

/** Initialise a fresh daemon; returns the recovery key and root token (the daemon is unsealed after init). */
export async function initialize(d: Daemon): Promise<{ key: string; root: string }> {
  const r = await d.req('POST', 'sys/init', { keychain: false }, { token: null });
  if (r.status !== 200) throw new Error(`init failed: ${r.status} ${r.text}`);
  useToken(d, r.body.root_token);
  return { key: r.body.keys[0], root: r.body.root_token };
}

/** Unseal with the recovery key. */
export async function unseal(d: Daemon, key: string, root: string): Promise<void> {
  const r = await d.req('POST', 'sys/unseal', { key }, { token: null });
  if (r.status !== 200 || r.body.sealed !== false) throw new Error(`unseal failed: ${r.status} ${r.text}`);
  useToken(d, root);
}

/** Make `d.req` and `d.cli` use `token` by default (the daemon support captures the token at start). */
export function useToken(d: Daemon, token: string): void {
  const req = d.req;
  const cli = d.cli;
  d.token = token;
  d.req = (method, path, body, o = {}) =>
    req(method, path, body, { ...o, token: o.token === null ? null : (o.token ?? token) });
  d.cli = (args, o = {}) => cli(args, { ...o, token: o.token === null ? null : (o.token ?? token) });
}

/** A request that must succeed (throws with the answer otherwise). */
export async function must(d: Daemon, method: string, path: string, body?: unknown): Promise<Answer> {
  const r = await d.req(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path} -> ${r.status} ${r.text.slice(0, 300)}`);
  return r;
}

/** A value written by one sequential writer: what was acknowledged, and what was in flight at the kill. */
interface Slot<T> {
  acked: T | null;
  inflight: T | null;
}

/** Everything acknowledged so far, and what was in flight when the daemon died. */
export class Ledger {
  /** Keys whose creation was acknowledged, with their type. */
  keys = new Map<string, string>();
  /** Key creations in flight at the kill: name -> type. */
  pendingKeys = new Map<string, string>();
  /** Rotated keys: acknowledged latest version; whether a rotation was in flight. */
  rotations = new Map<string, { latest: number; inflight: boolean }>();
  /** Key config (deletion_allowed, auto_rotate_period seconds) per key. */
  configs = new Map<string, Slot<{ deletion_allowed: boolean; auto_rotate_period: number }>>();
  /** Acknowledged ciphertexts: key -> [{ciphertext, plaintext}]. */
  ciphertexts = new Map<string, Array<{ ciphertext: string; plaintext: string }>>();
  /** KV paths: acknowledged version and data per version; pending write. */
  kv = new Map<
    string,
    { versions: Map<number, Record<string, string>>; latest: number; inflight: Record<string, string> | null }
  >();
  /** ACL policies: text. */
  policies = new Map<string, Slot<string>>();
  /** Sync: secrets whose association with the destination was acknowledged; one in flight. */
  syncAssociated = new Set<string>();
  syncPending: string | null = null;
  /** Counters for the report. */
  acked = 0;
  checked = 0;
}

/** KV v2 keeps the last 10 versions by default (Vault's max_versions default). */
const KV_KEPT = 10;
function pruneKept(slot: { versions: Map<number, unknown>; latest: number }): void {
  for (const v of slot.versions.keys()) if (v <= slot.latest - KV_KEPT) slot.versions.delete(v);
}

/** Names used by the load (fixed, so one writer owns each record). */
export const ROTATED = ['rot-a', 'rot-b'];
export const CONFIGURED = ['cfg-a', 'cfg-b'];
export const ENCRYPTING = ['enc-aes', 'enc-chacha', ...ROTATED];
const KV_PATHS = ['app/db', 'app/api', 'team/x/y', 'svc'];
const POLICIES = ['pol-a', 'pol-b'];

/** Create the fixed keys the load works on (before the first kill). */
export async function seed(d: Daemon, ledger: Ledger): Promise<void> {
  for (const [name, type] of [
    ['enc-aes', 'aes256-gcm96'],
    ['enc-chacha', 'chacha20-poly1305'],
    ['rot-a', 'aes256-gcm96'],
    ['rot-b', 'aes128-gcm96'],
    ['cfg-a', 'aes256-gcm96'],
    ['cfg-b', 'ed25519'],
  ] as const) {
    await must(d, 'POST', `transit/keys/${name}`, { type });
    ledger.keys.set(name, type);
  }
  for (const n of ROTATED) ledger.rotations.set(n, { latest: 1, inflight: false });
  for (const n of CONFIGURED)
    ledger.configs.set(n, { acked: { deletion_allowed: false, auto_rotate_period: 0 }, inflight: null });
}

/** Run the mixed load until `stop()` resolves or the daemon dies; returns when every worker has stopped. */
export async function runLoad(
  d: Daemon,
  ledger: Ledger,
  rnd: () => number,
  iteration: number,
  extra: Array<(alive: () => boolean) => Promise<void>> = [],
): Promise<void> {
  let dead = false;
  const alive = () => !dead;
  // A request that fails at the transport level means the daemon died: the outcome is unknown.
  const call = async (method: string, path: string, body?: unknown): Promise<Answer | null> => {
    if (dead) return null;
    try {
      return await d.req(method, path, body);
    } catch {
      dead = true;
      return null;
    }
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;

  const creator = async () => {
    for (let n = 0; alive(); n++) {
      const name = `k-${iteration}-${n}`;
      const type = pick(['aes256-gcm96', 'chacha20-poly1305', 'ed25519', 'hmac']);
      ledger.pendingKeys.set(name, type);
      const r = await call('POST', `transit/keys/${name}`, { type });
      if (!r) return;
      if (r.status !== 200 && r.status !== 204) throw new Error(`create ${name}: ${r.status} ${r.text}`);
      ledger.pendingKeys.delete(name);
      ledger.keys.set(name, type);
      ledger.acked++;
    }
  };
  const rotator = (name: string) => async () => {
    const slot = ledger.rotations.get(name)!;
    while (alive()) {
      slot.inflight = true;
      const r = await call('POST', `transit/keys/${name}/rotate`);
      if (!r) return;
      if (r.status !== 200) throw new Error(`rotate ${name}: ${r.status} ${r.text}`);
      slot.latest = r.body.data.latest_version;
      slot.inflight = false;
      ledger.acked++;
    }
  };
  const configurer = (name: string) => async () => {
    const slot = ledger.configs.get(name)!;
    while (alive()) {
      const want = { deletion_allowed: rnd() < 0.5, auto_rotate_period: pick([0, 3600, 86400, 7200]) };
      slot.inflight = want;
      const r = await call('POST', `transit/keys/${name}/config`, {
        deletion_allowed: want.deletion_allowed,
        auto_rotate_period: `${want.auto_rotate_period}s`,
      });
      if (!r) return;
      if (r.status !== 200 && r.status !== 204) throw new Error(`config ${name}: ${r.status} ${r.text}`);
      slot.acked = want;
      slot.inflight = null;
      ledger.acked++;
    }
  };
  const encrypter = async () => {
    while (alive()) {
      const key = pick(ENCRYPTING);
      const plaintext = randomBytes(1 + Math.floor(rnd() * 64)).toString('base64');
      const r = await call('POST', `transit/encrypt/${key}`, { plaintext });
      if (!r) return;
      if (r.status !== 200) throw new Error(`encrypt ${key}: ${r.status} ${r.text}`);
      const list = ledger.ciphertexts.get(key) ?? [];
      list.push({ ciphertext: r.body.data.ciphertext, plaintext });
      ledger.ciphertexts.set(key, list);
      ledger.acked++;
    }
  };
  const kvWriter = (path: string) => async () => {
    const slot = ledger.kv.get(path) ?? { versions: new Map(), latest: 0, inflight: null };
    ledger.kv.set(path, slot);
    while (alive()) {
      const data = {
        value: randomBytes(8).toString('hex'),
        n: String(slot.latest + 1),
        pad: 'p'.repeat(Math.floor(rnd() * 2000)),
      };
      slot.inflight = data;
      const r = await call('POST', `secret/data/${path}`, { data });
      if (!r) return;
      if (r.status !== 200) throw new Error(`kv ${path}: ${r.status} ${r.text}`);
      slot.latest = r.body.data.version;
      slot.versions.set(slot.latest, data);
      pruneKept(slot);
      slot.inflight = null;
      ledger.acked++;
    }
  };
  const policyWriter = (name: string) => async () => {
    const slot = ledger.policies.get(name) ?? { acked: null, inflight: null };
    ledger.policies.set(name, slot);
    while (alive()) {
      const text = `path "secret/data/${randomBytes(4).toString('hex')}" { capabilities = ["read"] }`;
      slot.inflight = text;
      const r = await call('POST', `sys/policies/acl/${name}`, { policy: text });
      if (!r) return;
      if (r.status !== 204 && r.status !== 200) throw new Error(`policy ${name}: ${r.status} ${r.text}`);
      slot.acked = text;
      slot.inflight = null;
      ledger.acked++;
    }
  };
  const workers = [
    creator,
    ...ROTATED.map(rotator),
    ...CONFIGURED.map(configurer),
    encrypter,
    encrypter,
    ...KV_PATHS.map(kvWriter),
    ...POLICIES.map(policyWriter),
    ...extra.map((w) => () => w(alive)),
  ];
  // Observe the daemon's death too (a worker may be between requests).
  d.proc.once('exit', () => (dead = true));
  await Promise.all(workers.map((w) => w()));
}

/** The sync destination the crash load pushes to (a local fake provider). */
export const SYNC_DEST = 'sys/sync/destinations/hosting-project/crash';
const SYNC_SECRETS = ['sync/a', 'sync/b', 'sync/c'];

/**
 * Sync queue work for `runLoad`: write KV secrets under sync/ and associate them with the destination,
 * so the sync queue is busy when the daemon dies. Secret writes go through the KV ledger.
 */
export function syncWorker(d: Daemon, ledger: Ledger, rnd: () => number): (alive: () => boolean) => Promise<void> {
  return async (alive) => {
    const call = async (method: string, path: string, body?: unknown): Promise<Answer | null> => {
      try {
        return await d.req(method, path, body);
      } catch {
        return null;
      }
    };
    while (alive()) {
      const path = SYNC_SECRETS[Math.floor(rnd() * SYNC_SECRETS.length)]!;
      const slot = ledger.kv.get(path) ?? { versions: new Map(), latest: 0, inflight: null };
      ledger.kv.set(path, slot);
      const data = { V: randomBytes(6).toString('hex') };
      slot.inflight = data;
      const w = await call('POST', `secret/data/${path}`, { data });
      if (!w) return;
      if (w.status !== 200) throw new Error(`kv ${path}: ${w.status} ${w.text}`);
      slot.latest = w.body.data.version;
      slot.versions.set(slot.latest, data);
      pruneKept(slot);
      slot.inflight = null;
      ledger.acked++;
      if (ledger.syncAssociated.has(path)) continue;
      ledger.syncPending = path;
      const a = await call('POST', `${SYNC_DEST}/associations/set`, { mount: 'secret', secret_name: path });
      if (!a) return;
      if (a.status !== 200) throw new Error(`associate ${path}: ${a.status} ${a.text}`);
      ledger.syncAssociated.add(path);
      ledger.syncPending = null;
      ledger.acked++;
    }
  };
}

/** Sync associations after a restart: every acknowledged one is there; returns name -> status. */
export async function verifySync(d: Daemon, ledger: Ledger): Promise<Map<string, string>> {
  const r = await must(d, 'GET', `${SYNC_DEST}/associations`);
  const recs = Object.values(r.body.data.associated_secrets ?? {}) as Array<{
    secret_name: string;
    sync_status: string;
  }>;
  const byName = new Map(recs.map((x) => [x.secret_name, x.sync_status]));
  for (const name of ledger.syncAssociated)
    if (!byName.has(name)) throw new Error(`crash check: acknowledged sync association ${name} lost`);
  if (ledger.syncPending && byName.has(ledger.syncPending)) ledger.syncAssociated.add(ledger.syncPending);
  ledger.syncPending = null;
  for (const name of byName.keys())
    if (!ledger.syncAssociated.has(name)) throw new Error(`crash check: association ${name} was never requested`);
  ledger.checked += byName.size;
  return byName;
}

/** After a restart: check the ledger against the daemon, fold in-flight outcomes into it. Throws on any loss or corruption. */
export async function verify(d: Daemon, ledger: Ledger): Promise<void> {
  const fail = (msg: string) => {
    throw new Error(`crash check: ${msg}`);
  };
  // Keys: every acknowledged one readable; in-flight ones wholly there (usable) or absent.
  const listed = await must(d, 'LIST', 'transit/keys');
  const names = new Set<string>(listed.body.data.keys);
  for (const [name] of ledger.keys) if (!names.has(name)) fail(`acknowledged key ${name} is missing`);
  for (const [name, type] of ledger.pendingKeys) {
    if (names.has(name)) ledger.keys.set(name, type);
  }
  ledger.pendingKeys.clear();
  for (const name of names) {
    const r = await d.req('GET', `transit/keys/${name}`);
    if (r.status !== 200) fail(`key ${name} listed but unreadable: ${r.status} ${r.text}`);
    const type = ledger.keys.get(name);
    if (!type) fail(`key ${name} exists but was never requested`);
    // Usable: a key half-written would fail here.
    if (type === 'aes256-gcm96' || type === 'chacha20-poly1305' || type === 'aes128-gcm96') {
      const e = await must(d, 'POST', `transit/encrypt/${name}`, { plaintext: 'cHJvYmU=' });
      const back = await must(d, 'POST', `transit/decrypt/${name}`, { ciphertext: e.body.data.ciphertext });
      if (back.body.data.plaintext !== 'cHJvYmU=') fail(`key ${name} round trip`);
      if (!e.body.data.ciphertext.startsWith(`vault:v${r.body.data.latest_version}:`))
        fail(`key ${name} encrypts with a version other than its latest`);
    } else if (type === 'ed25519') {
      const s = await must(d, 'POST', `transit/sign/${name}`, { input: 'cHJvYmU=' });
      const v = await must(d, 'POST', `transit/verify/${name}`, {
        input: 'cHJvYmU=',
        signature: s.body.data.signature,
      });
      if (v.body.data.valid !== true) fail(`key ${name} sign/verify`);
    } else if (type === 'hmac') {
      await must(d, 'POST', `transit/hmac/${name}`, { input: 'cHJvYmU=' });
    }
    ledger.checked++;
  }
  // Rotations: no acknowledged rotation lost, at most the one in flight added, every version present.
  for (const [name, slot] of ledger.rotations) {
    const r = await must(d, 'GET', `transit/keys/${name}`);
    const latest: number = r.body.data.latest_version;
    if (latest < slot.latest) fail(`key ${name}: acknowledged version ${slot.latest} lost (latest ${latest})`);
    if (latest > slot.latest + (slot.inflight ? 1 : 0))
      fail(`key ${name}: latest ${latest} beyond acknowledged ${slot.latest}`);
    const versions = Object.keys(r.body.data.keys)
      .map(Number)
      .sort((a, b) => a - b);
    if (versions.length !== latest || versions[0] !== 1 || versions.at(-1) !== latest)
      fail(`key ${name}: versions ${versions.join(',')} for latest ${latest}`);
    slot.latest = latest;
    slot.inflight = false;
    ledger.checked++;
  }
  // Config: the acknowledged value, or the one in flight.
  for (const [name, slot] of ledger.configs) {
    const r = await must(d, 'GET', `transit/keys/${name}`);
    const got = { deletion_allowed: r.body.data.deletion_allowed, auto_rotate_period: r.body.data.auto_rotate_period };
    const same = (x: typeof got | null) =>
      x !== null && x.deletion_allowed === got.deletion_allowed && x.auto_rotate_period === got.auto_rotate_period;
    if (!same(slot.acked) && !same(slot.inflight))
      fail(
        `key ${name}: config ${JSON.stringify(got)} is neither acknowledged ${JSON.stringify(slot.acked)} nor in-flight ${JSON.stringify(slot.inflight)}`,
      );
    slot.acked = got;
    slot.inflight = null;
    ledger.checked++;
  }
  // Ciphertexts: every one issued before any kill still decrypts to its plaintext.
  for (const [key, list] of ledger.ciphertexts) {
    for (let i = 0; i < list.length; i += 500) {
      const chunk = list.slice(i, i + 500);
      const r = await must(d, 'POST', `transit/decrypt/${key}`, {
        batch_input: chunk.map((c) => ({ ciphertext: c.ciphertext })),
      });
      const results: Array<{ plaintext?: string; error?: string }> = r.body.data.batch_results;
      results.forEach((res, j) => {
        if (res.error || res.plaintext !== chunk[j]!.plaintext)
          fail(`ciphertext ${j + i} of ${key} no longer decrypts: ${res.error ?? 'wrong plaintext'}`);
      });
      ledger.checked += chunk.length;
    }
  }
  // KV: every acknowledged version with its exact data; an in-flight write wholly there or absent.
  for (const [path, slot] of ledger.kv) {
    const meta = await d.req('GET', `secret/metadata/${path}`);
    if (slot.latest === 0 && !slot.inflight) continue;
    if (meta.status === 404 && slot.latest === 0) {
      slot.inflight = null;
      continue;
    }
    if (meta.status !== 200) fail(`kv ${path}: metadata ${meta.status} ${meta.text}`);
    const current: number = meta.body.data.current_version;
    if (current < slot.latest) fail(`kv ${path}: acknowledged version ${slot.latest} lost (current ${current})`);
    if (current > slot.latest + (slot.inflight ? 1 : 0))
      fail(`kv ${path}: current ${current} beyond acknowledged ${slot.latest}`);
    const latest = await d.req('GET', `secret/data/${path}`);
    if (latest.status !== 200)
      fail(`kv ${path}: latest version ${current} unreadable: ${latest.status} ${latest.text}`);
    if (latest.body.data.metadata.version !== current)
      fail(`kv ${path}: data version ${latest.body.data.metadata.version} != metadata ${current}`);
    if (current > slot.latest) {
      if (JSON.stringify(latest.body.data.data) !== JSON.stringify(slot.inflight))
        fail(`kv ${path}: in-flight version ${current} half-written`);
      slot.versions.set(current, slot.inflight!);
      slot.latest = current;
      pruneKept(slot);
    }
    slot.inflight = null;
    for (const [v, data] of slot.versions) {
      const r = await d.req('GET', `secret/data/${path}?version=${v}`);
      if (r.status !== 200 || JSON.stringify(r.body.data.data) !== JSON.stringify(data))
        fail(`kv ${path}: version ${v} lost or changed (${r.status})`);
      ledger.checked++;
    }
  }
  // Policies.
  for (const [name, slot] of ledger.policies) {
    const r = await d.req('GET', `sys/policies/acl/${name}`);
    const got = r.status === 200 ? (r.body.data.policy as string) : null;
    if (got !== slot.acked && got !== slot.inflight)
      fail(`policy ${name}: ${got} is neither acknowledged nor in flight`);
    slot.acked = got;
    slot.inflight = null;
    ledger.checked++;
  }
}
