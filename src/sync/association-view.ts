/**
 * The cached association view of each destination: what GET
 * sys/sync/destinations/:type/:name/associations answers, and what `associations/set` and
 * `associations/remove` answer with, since both return the destination's whole map (as Vault does).
 *
 * It exists for the `sync-1000` benchmark (bench/cases/sync-case.js; docs/benchmarks.md, the
 * association map answers of bulk `associations/set`): 1,000 set calls on one destination, each
 * answered with the map of every association so far. Built and serialized per call, that map was
 * ~500,000 records and the largest cost of bulk association. Here a view keeps each link's records
 * frozen and their JSON as bytes, updated link by link (SyncStore.linkChanged and the worker's
 * in-flight status), joined in blocks so that a change re-joins one block. The bytes are those the
 * router would write for the same map, Go escaping included (test/unit/sync/worker.test.ts checks).
 */
import { goJson } from '../framework/go-json.js';
import { notFound } from '../framework/errors.js';
import type { KvSource } from './kv-source.js';
import type { SyncStore } from './store.js';
import { ERROR_STATUSES, linkKey, type ActivityStatus, type DestinationType, type LinkRecord } from './types.js';

/** Association maps per destination, and the JSON of the answers made from them. */
export class AssociationViews {
  constructor(
    private readonly store: SyncStore,
    private readonly kv: KvSource,
    /** The worker's in-flight status of a link (Syncer.activityOf). */
    private readonly activityOf: (link: string) => ActivityStatus | undefined,
  ) {}

  /**
   * Association maps per destination, kept up to date link by link (SyncStore.linkChanged): set and
   * remove answer with the whole map, so 1,000 associations set one by one used to build ~500,000
   * records. A view holds the sorted link ids with each link's frozen records; an answer copies
   * them into one frozen object, reused until a link changes. Records show the mount path of the
   * link's accessor, so a view also remembers the paths it used (a remount rebuilds it).
   */
  private readonly views = new Map<string, AssociationView>();

  /** A link of `dest` (`type/name`) changed (`id` null: all of its links were forgotten). */
  linkChanged(dest: string, id: string | null): void {
    const v = this.views.get(dest);
    if (!v) return;
    if (id === null) this.views.delete(dest);
    else {
      v.dirty.add(id);
      v.secrets = null;
      v.json = null;
      v.gen++;
    }
  }

  /** All associations of a destination, with their latest status. */
  async associations(
    type: DestinationType,
    name: string,
    overlay?: LinkRecord | null,
  ): Promise<Record<string, unknown>> {
    const d = await this.store.getDest(type, name);
    if (!d) throw notFound(`destination ${type}/${name} does not exist`);
    const key = `${type}/${name}`;
    let v = this.views.get(key);
    if (v && [...v.mounts].some(([acc, path]) => this.kv.mount(acc)?.path !== path)) {
      this.views.delete(key);
      v = undefined;
    }
    if (!v) await this.store.links(type, name); // loads the links; the rest runs without a pause
    const view = this.viewOf(type, name, v);
    if (!view || overlay) {
      const secrets = view ? this.secretsOf(view) : await this.freshRecords(type, name);
      return {
        associated_secrets: overlay ? { ...secrets, ...this.linkRecords(overlay) } : secrets,
        store_name: name,
        store_type: type,
      };
    }
    // The map's JSON is kept with the view (one fragment per link): set and remove answer with the
    // whole map, and serializing it for every call was the largest cost of bulk association. The
    // map as an object (for audit, or a caller reading it) is built only when asked for, from the
    // view as it was at this answer.
    view.json ??= joinView(view, Buffer.from(`},"store_name":${goJson(name)},"store_type":${goJson(type)}}`));
    const gen = view.gen;
    let built = view.secrets;
    const pairs = built ? null : view.pairs.slice();
    const answer: Record<string, unknown> = {};
    Object.defineProperty(answer, 'associated_secrets', {
      enumerable: true,
      configurable: true,
      get: () => {
        built ??= view.gen === gen ? this.secretsOf(view) : freezePairs(pairs!);
        Object.defineProperty(answer, 'associated_secrets', {
          value: built,
          enumerable: true,
          configurable: true,
          writable: true,
        });
        return built;
      },
    });
    answer.store_name = name;
    answer.store_type = type;
    this.answerJson.set(answer, view.json);
    return answer;
  }

  /** Serialized answers of `associations` (see Reply.dataJson), by answer object. */
  private readonly answerJson = new WeakMap<object, readonly Buffer[]>();

  /** The JSON (UTF-8 pieces, in order) of an answer `associations` (or set/remove) returned, when kept; else undefined. */
  jsonOf(answer: object): readonly Buffer[] | undefined {
    return this.answerJson.get(answer);
  }

  /** The association map of a view as one frozen object (kept until a link changes). */
  private secretsOf(v: AssociationView): Readonly<Record<string, unknown>> {
    v.secrets ??= freezePairs(v.pairs);
    return v.secrets;
  }

  /** The view of a destination, brought up to date, or null when its links are not loaded. */
  private viewOf(type: DestinationType, name: string, v: AssociationView | undefined): AssociationView | null {
    const key = `${type}/${name}`;
    if (!v) {
      const ids = this.store.peekIds(type, name);
      if (!ids) return null;
      v = {
        ids: [...ids],
        pairs: [],
        fragments: [],
        cuts: [],
        blocks: new Map(),
        mounts: new Map(),
        dirty: new Set(),
        secrets: null,
        json: null,
        gen: 0,
      };
      for (const id of v.ids) {
        v.cuts.push(cutAfter(id));
        v.pairs.push(this.pairsOf(this.store.peekLink(type, name, id)!, v));
        v.fragments.push(fragmentOf(v.pairs[v.pairs.length - 1]!));
      }
      this.views.set(key, v);
    }
    for (const id of v.dirty) {
      const l = this.store.peekLink(type, name, id);
      let lo = 0;
      let hi = v.ids.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (v.ids[mid]! < id) lo = mid + 1;
        else hi = mid;
      }
      const found = v.ids[lo] === id;
      if (l && found) {
        v.pairs[lo] = this.pairsOf(l, v);
        v.fragments[lo] = fragmentOf(v.pairs[lo]!);
      } else if (l) {
        const pairs = this.pairsOf(l, v);
        v.ids.splice(lo, 0, id);
        v.pairs.splice(lo, 0, pairs);
        v.fragments.splice(lo, 0, fragmentOf(pairs));
        v.cuts.splice(lo, 0, cutAfter(id));
      } else if (found) {
        v.ids.splice(lo, 1);
        v.pairs.splice(lo, 1);
        v.fragments.splice(lo, 1);
        v.cuts.splice(lo, 1);
      }
    }
    if (v.dirty.size) v.json = null;
    v.dirty.clear();
    return v;
  }

  /** Without a view (the links were dropped from the cache meanwhile): build the map once. */
  private async freshRecords(type: DestinationType, name: string): Promise<Record<string, unknown>> {
    const secrets: Record<string, unknown> = {};
    for (const l of await this.store.links(type, name)) Object.assign(secrets, this.linkRecords(l));
    return secrets;
  }

  /** The frozen [key, record] pairs of a link for view `v` (noting the mount path shown). */
  private pairsOf(
    l: LinkRecord,
    v: AssociationView,
  ): ReadonlyArray<readonly [string, Readonly<Record<string, unknown>>]> {
    let path = v.mounts.get(l.accessor);
    if (path === undefined && !v.mounts.has(l.accessor))
      v.mounts.set(l.accessor, (path = this.kv.mount(l.accessor)?.path));
    const pairs: Array<readonly [string, Readonly<Record<string, unknown>>]> = [];
    this.eachRecord(l, path, (k, rec) => pairs.push([k, Object.freeze(rec)]));
    return pairs;
  }

  /** The association records of one link (one per sub-key with secret-key granularity). */
  private linkRecords(l: LinkRecord): Record<string, Record<string, unknown>> {
    const out: Record<string, Record<string, unknown>> = {};
    this.eachRecord(l, this.kv.mount(l.accessor)?.path, (k, rec) => (out[k] = rec));
    return out;
  }

  /**
   * Hand each association record of a link to `emit`, keys in order; `mountPath` is the accessor's
   * current mount (undefined when it is gone: the link's recorded path is shown). While the worker is
   * at the link, every record shows the in-flight status (SYNCING / UNSYNCING) and no error.
   */
  private eachRecord(
    l: LinkRecord,
    mountPath: string | undefined,
    emit: (key: string, rec: Record<string, unknown>) => void,
  ): void {
    const activity = this.activityOf(linkKey(l.dest_type, l.dest_name, l.id));
    const mount = (mountPath ?? l.mount).replace(/\/$/, '');
    const subs = Object.keys(l.entries).filter((k) => k !== '');
    if (subs.length === 0) {
      const e = l.entries[''];
      const status = activity ?? e?.sync_status ?? l.sync_status;
      const rec: Record<string, unknown> = {
        accessor: l.accessor,
        mount,
        secret_name: l.secret_name,
        sync_status: status,
        updated_at: e?.updated_at ?? l.updated_at,
      };
      const err = activity ? undefined : (e?.error ?? l.error);
      if (err && ERROR_STATUSES.has(status)) rec.error = err;
      emit(`${l.accessor}/${l.secret_name}`, rec);
      return;
    }
    for (const sub of subs.sort()) {
      const e = l.entries[sub]!;
      const status = activity ?? e.sync_status;
      const rec: Record<string, unknown> = {
        accessor: l.accessor,
        mount,
        secret_name: l.secret_name,
        sub_key: sub,
        sync_status: status,
        updated_at: e.updated_at,
      };
      if (!activity && e.error && ERROR_STATUSES.has(status)) rec.error = e.error;
      emit(`${l.accessor}/${l.secret_name}/${sub}`, rec);
    }
  }
}

/** The association map of one destination, kept up to date link by link. */
interface AssociationView {
  /** Link ids, sorted, and the [key, record] pairs of each. */
  ids: string[];
  pairs: Array<ReadonlyArray<readonly [string, Readonly<Record<string, unknown>>]>>;
  /** Mount path of each accessor it shows (undefined: the mount is gone). */
  mounts: Map<string, string | undefined>;
  /** JSON (UTF-8) of each link's pairs (`"key":{...},...`; empty for none), as the router would serialize them. */
  fragments: Buffer[];
  /** Whether a block of the answer ends after each link (see `joinView`). */
  cuts: boolean[];
  /** Joined blocks of fragments by their first link id, with the fragments they were joined from. */
  blocks: Map<string, { fragments: Buffer[]; joined: Buffer }>;
  /** Links changed since the pairs were last brought up to date. */
  dirty: Set<string>;
  /** The map built from the pairs; null after a change. */
  secrets: Readonly<Record<string, unknown>> | null;
  /** The JSON (UTF-8 pieces) of the whole answer (the map, store_name, store_type); null after a change. */
  json: readonly Buffer[] | null;
  /** Bumped by every change (an answer's lazily built map must be the one it was given). */
  gen: number;
}

/** One frozen map of association records from per-link pairs. */
function freezePairs(
  list: ReadonlyArray<ReadonlyArray<readonly [string, Readonly<Record<string, unknown>>]>>,
): Readonly<Record<string, unknown>> {
  const secrets: Record<string, unknown> = {};
  for (const pairs of list) for (const [k, rec] of pairs) secrets[k] = rec;
  return Object.freeze(secrets);
}

/** The JSON members of a link's association records, as UTF-8. */
function fragmentOf(pairs: ReadonlyArray<readonly [string, Readonly<Record<string, unknown>>]>): Buffer {
  let out = '';
  for (const [k, rec] of pairs) out += (out ? ',' : '') + goJson(k) + ':' + goJson(rec);
  return Buffer.from(out, 'utf8');
}

const ANSWER_OPEN = Buffer.from('{"associated_secrets":{');
const COMMA = Buffer.from(',');

/**
 * Whether a block of an answer ends after link `id`: for about one id in 32, by a hash of the id, so
 * a block's links stay together when links are added or removed elsewhere in the map.
 */
function cutAfter(id: string): boolean {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return (h & 31) === 0;
}

/** The fragments, joined with commas (empty ones left out). */
function joinBlock(fragments: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [];
  for (const f of fragments) {
    if (f.length === 0) continue;
    if (parts.length) parts.push(COMMA);
    parts.push(f);
  }
  return Buffer.concat(parts);
}

/**
 * The answer's JSON as pieces: `{"associated_secrets":{`, the map's members in blocks of about 32
 * links, then `close`. A block is joined again only when one of its links changed; the pieces are
 * written out as they are (one corked socket write), never copied into one buffer. Set and remove
 * answer with the whole map, so joining (and before that, serializing) it per call was the largest
 * part of their cost.
 */
function joinView(v: AssociationView, close: Buffer): readonly Buffer[] {
  const parts: Buffer[] = [ANSWER_OPEN];
  const blocks = new Map<string, { fragments: Buffer[]; joined: Buffer }>();
  let start = 0;
  for (let i = 0; i < v.ids.length; i++) {
    if (!v.cuts[i] && i !== v.ids.length - 1) continue;
    const first = v.ids[start]!;
    let b = v.blocks.get(first);
    if (!b || b.fragments.length !== i + 1 - start || b.fragments.some((f, k) => f !== v.fragments[start + k])) {
      const fragments = v.fragments.slice(start, i + 1);
      b = { fragments, joined: joinBlock(fragments) };
    }
    blocks.set(first, b);
    if (b.joined.length) {
      if (parts.length > 1) parts.push(COMMA);
      parts.push(b.joined);
    }
    start = i + 1;
  }
  v.blocks = blocks;
  parts.push(close);
  return parts;
}
