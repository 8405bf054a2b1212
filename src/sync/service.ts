/**
 * Secret sync domain operations (no HTTP here): destinations, associations, config, KV events.
 * Rules of spec section 3 and reference sync-wire.md 1.3-1.8.
 */
import type { Clock, KvEvent, Logger, MountInfo } from '../framework/context.js';
import { denied, invalid, notFound } from '../framework/errors.js';
import { DESTINATION_TYPES } from './destinations/index.js';
import { checkTagLimits } from './destinations/common.js';
import { gcpLabels } from './destinations/provider-c-sm.js';
import { nameProblem, normalizeName } from './name-rules.js';
import { NetworkGuard } from './network-guard.js';
import type { GithubAppRecord, SyncStore } from './store.js';
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { NameTemplate, TemplateError } from './templates.js';
import {
  DEFAULT_SYNC_CONFIG,
  DESTINATION_TYPE_IDS,
  ERROR_STATUSES,
  linkId,
  linkKey,
  parseLinkKey,
  type DestinationOptions,
  type DestinationRecord,
  type DestinationType,
  type ActivityStatus,
  type EntryState,
  type Granularity,
  type LinkRecord,
  type SyncConfig,
} from './types.js';
import { QueueFullError, worstStatus, type KvSource, type Syncer } from './worker.js';

/** The literal Vault shows for a stored sensitive value. */
export const MASK = '*****';

const DEST_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** Vault's refusal text for deleting a destination that still has associations (reference 1.4). */
export const STILL_MANAGING = 'store cannot be deleted because it is still managing secrets';

/** What a create/update request supplied (undefined = omitted). */
export type DestinationInput = Record<string, unknown>;

/** Domain operations behind the sys/sync routes. */
export class SyncService {
  constructor(
    readonly store: SyncStore,
    readonly syncer: Syncer,
    private readonly kv: KvSource,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    store.linkChanged = (dest, id) => this.viewLinkChanged(dest, id);
    syncer.onActivity = (link) => {
      const { type, name, id } = parseLinkKey(link);
      this.viewLinkChanged(`${type}/${name}`, id);
    };
  }

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }

  // ---- destinations ----

  /** Names grouped by type (LIST sys/sync/destinations). */
  async listDestinations(): Promise<Record<string, unknown> | null> {
    const keyInfo: Record<string, string[]> = {};
    let total = 0;
    for (const type of DESTINATION_TYPE_IDS) {
      const names = await this.store.destNames(type);
      if (names.length === 0) continue;
      keyInfo[`${type}/`] = names;
      total += names.length;
    }
    if (total === 0) return null;
    return { keys: Object.keys(keyInfo), key_info: keyInfo, total_destinations: total };
  }

  /** Names of one type (LIST sys/sync/destinations/:type). */
  async listDestinationsOfType(type: DestinationType): Promise<Record<string, unknown> | null> {
    const names = await this.store.destNames(type);
    return names.length ? { keys: names, total_destinations: names.length } : null;
  }

  /** A destination as read (sensitive values masked), or null. */
  async readDestination(type: DestinationType, name: string): Promise<Record<string, unknown> | null> {
    const d = await this.store.getDest(type, name);
    return d ? destinationView(d) : null;
  }

  /** Whether a destination exists (ACL existence check). */
  async destinationExists(type: DestinationType, name: string): Promise<boolean> {
    return (await this.store.getDest(type, name)) !== null;
  }

  /** Create or update (merge) a destination; PATCH refuses a missing one. */
  async writeDestination(type: DestinationType, name: string, input: DestinationInput, mode: 'post' | 'patch'): Promise<Record<string, unknown>> {
    if (!DEST_NAME.test(name) || name === '.' || name === '..') throw invalid('name', 'must be 1-128 characters of letters, digits, "_", "." and "-"');
    const def = DESTINATION_TYPES[type];
    const existing = await this.store.getDest(type, name);
    if (!existing && mode === 'patch') throw notFound(`destination ${type}/${name} does not exist`);
    if (existing?.purge_initiated_at) throw invalid('name', 'destination is being deleted (purge in progress)');

    const conn: Record<string, unknown> = existing ? { ...existing.connection } : { ...def.defaults };
    for (const field of Object.keys(def.fields)) {
      const v = input[field];
      if (v === undefined) continue;
      // A field stored before it existed (older record) counts as its default.
      if (existing && def.immutable.includes(field) && !sameValue(v, existing.connection[field] ?? def.defaults[field])) {
        throw invalid(field, 'cannot be changed after the destination is created; create a new destination instead');
      }
      conn[field] = v;
    }
    if (!existing) {
      for (const r of def.required) {
        const v = conn[r];
        if (v === undefined || v === '' || (Array.isArray(v) && v.length === 0)) throw invalid(r, 'is required');
      }
    }
    def.check?.(conn);
    if (type === 'repohost' && conn.app_name && !(await this.store.getApp(String(conn.app_name)))) {
      throw invalid('app_name', `no GitHub App "${String(conn.app_name).slice(0, 64)}" is registered under sys/sync/github-apps`);
    }
    const resyncAll = existing ? (def.onUpdate?.(existing.connection, conn) ?? false) : false;

    const opts: DestinationOptions = existing
      ? { ...existing.options }
      : { granularity: def.defaultGranularity, custom_tags: {}, allowed_ipv4_addresses: [], allowed_ipv6_addresses: [], allowed_ports: [], disable_strict_networking: false };
    if (input.granularity !== undefined) opts.granularity = input.granularity as Granularity;
    if (input.secret_name_template !== undefined) {
      if (input.secret_name_template === '') delete opts.secret_name_template;
      else opts.secret_name_template = String(input.secret_name_template);
    }
    if (input.custom_tags !== undefined) {
      const tags = input.custom_tags as Record<string, string>;
      if (!def.customTags && Object.keys(tags).length > 0) throw invalid('custom_tags', `is not supported by ${type}`);
      for (const k of Object.keys(tags)) if (k === '') throw invalid('custom_tags', 'keys must not be empty');
      if (def.tagLimits) checkTagLimits(tags, def.tagLimits, type === 'provider-c-sm' ? gcpLabels : undefined);
      opts.custom_tags = tags;
    }
    if (input.allowed_ipv4_addresses !== undefined) opts.allowed_ipv4_addresses = input.allowed_ipv4_addresses as string[];
    if (input.allowed_ipv6_addresses !== undefined) opts.allowed_ipv6_addresses = input.allowed_ipv6_addresses as string[];
    if (input.allowed_ports !== undefined) opts.allowed_ports = input.allowed_ports as number[];
    if (input.disable_strict_networking !== undefined) opts.disable_strict_networking = Boolean(input.disable_strict_networking);
    new NetworkGuard(opts); // validates CIDRs and ports (400 naming the field)
    checkTemplate(type, opts.secret_name_template ?? def.defaultTemplates[opts.granularity], opts.granularity);

    const now = this.now();
    const record: DestinationRecord = {
      type,
      name,
      connection: conn,
      options: opts,
      created_at: existing?.created_at ?? now,
      updated_at: now,
      revision: (existing?.revision ?? 0) + 1,
    };
    await this.store.putDest(record);
    if (resyncAll) await this.resyncLinks(type, name);
    else if (existing) await this.retryFailedLinks(type, name);
    return destinationView(record);
  }

  /** After a destination change (e.g. fixed credentials), retry its failed links at once. */
  private async retryFailedLinks(type: DestinationType, name: string): Promise<void> {
    for (const l of await this.store.links(type, name)) {
      const key = linkKey(type, name, l.id);
      if (this.syncer.busy(key) || !this.syncer.hasRoom(key)) continue;
      if ([l.sync_status, ...Object.values(l.entries).map((e) => e.sync_status)].some((s) => ERROR_STATUSES.has(s))) await this.syncer.enqueue(key);
    }
  }

  /** After a change that affects what is at the provider (e.g. Vercel targets): sync every link again. */
  private async resyncLinks(type: DestinationType, name: string): Promise<void> {
    for (const l of [...(await this.store.links(type, name))]) {
      const key = linkKey(type, name, l.id);
      if (l.removing) continue;
      await this.syncer.locks.run(key, async () => {
        const cur = await this.store.getLink(type, name, l.id);
        if (!cur || cur.removing) return;
        const now = this.now();
        await this.store.putLink({ ...cur, sync_status: 'PENDING', updated_at: now, entries: Object.fromEntries(Object.entries(cur.entries).map(([k, st]) => [k, { ...st, sync_status: 'PENDING' as const, updated_at: now }])) });
      });
      if (!this.syncer.hasRoom(key)) continue; // left PENDING: the reconciliation scan queues it
      await this.syncer.enqueue(key, { now: true });
    }
  }

  /** Delete a destination: refused while it has associations unless purge (unsync all, then delete) or force. */
  async deleteDestination(type: DestinationType, name: string, opts: { purge: boolean; force: boolean }): Promise<Record<string, unknown> | null> {
    const d = await this.store.getDest(type, name);
    if (!d) return null;
    const ids = await this.store.linkIds(type, name);
    if (ids.length === 0 || opts.force) {
      // force_delete: external secrets are left behind for manual clean-up (reference 1.4).
      for (const id of ids) {
        const key = linkKey(type, name, id);
        await this.syncer.locks.run(key, async () => {
          await this.store.deleteLink(type, name, id);
          this.syncer.indexRemove(key);
        });
      }
      await this.store.deleteDest(type, name);
      this.store.forgetLinks(type, name);
      this.syncer.dropConnector(type, name);
      return null;
    }
    if (!opts.purge) throw invalid(STILL_MANAGING);
    const marked: DestinationRecord = { ...d, purge_initiated_at: d.purge_initiated_at ?? this.now() };
    delete marked.purge_error;
    await this.store.putDest(marked);
    for (const id of ids) {
      const key = linkKey(type, name, id);
      if (!this.syncer.hasRoom(key)) break; // the reconciliation scan queues the rest
      await this.syncer.enqueue(key, { now: true });
    }
    return destinationView(marked);
  }

  // ---- associations ----

  /**
   * Association maps per destination, kept up to date link by link (SyncStore.linkChanged): set and
   * remove answer with the whole map, so 1,000 associations set one by one used to build ~500,000
   * records. A view holds the sorted link ids with each link's frozen records; an answer copies
   * them into one frozen object, reused until a link changes. Records show the mount path of the
   * link's accessor, so a view also remembers the paths it used (a remount rebuilds it).
   */
  private readonly views = new Map<string, AssociationView>();

  private viewLinkChanged(dest: string, id: string | null): void {
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
  async associations(type: DestinationType, name: string, overlay?: LinkRecord | null): Promise<Record<string, unknown>> {
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
      return { associated_secrets: overlay ? { ...secrets, ...this.linkRecords(overlay) } : secrets, store_name: name, store_type: type };
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
        Object.defineProperty(answer, 'associated_secrets', { value: built, enumerable: true, configurable: true, writable: true });
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
      v = { ids: [...ids], pairs: [], fragments: [], cuts: [], blocks: new Map(), mounts: new Map(), dirty: new Set(), secrets: null, json: null, gen: 0 };
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
  private pairsOf(l: LinkRecord, v: AssociationView): ReadonlyArray<readonly [string, Readonly<Record<string, unknown>>]> {
    let path = v.mounts.get(l.accessor);
    if (path === undefined && !v.mounts.has(l.accessor)) v.mounts.set(l.accessor, (path = this.kv.mount(l.accessor)?.path));
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
  private eachRecord(l: LinkRecord, mountPath: string | undefined, emit: (key: string, rec: Record<string, unknown>) => void): void {
    const activity = this.syncer.activityOf(linkKey(l.dest_type, l.dest_name, l.id));
    const mount = (mountPath ?? l.mount).replace(/\/$/, '');
    const subs = Object.keys(l.entries).filter((k) => k !== '');
    if (subs.length === 0) {
      const e = l.entries[''];
      const status = activity ?? e?.sync_status ?? l.sync_status;
      const rec: Record<string, unknown> = { accessor: l.accessor, mount, secret_name: l.secret_name, sync_status: status, updated_at: e?.updated_at ?? l.updated_at };
      const err = activity ? undefined : (e?.error ?? l.error);
      if (err && ERROR_STATUSES.has(status)) rec.error = err;
      emit(`${l.accessor}/${l.secret_name}`, rec);
      return;
    }
    for (const sub of subs.sort()) {
      const e = l.entries[sub]!;
      const status = activity ?? e.sync_status;
      const rec: Record<string, unknown> = { accessor: l.accessor, mount, secret_name: l.secret_name, sub_key: sub, sync_status: status, updated_at: e.updated_at };
      if (!activity && e.error && ERROR_STATUSES.has(status)) rec.error = e.error;
      emit(`${l.accessor}/${l.secret_name}/${sub}`, rec);
    }
  }

  private kvMount(field: string, mountIn: string): MountInfo {
    const m = mountIn.trim() === '' ? undefined : this.kv.mount(mountIn.replace(/^\/+/, ''));
    if (!m) throw invalid(field, `no secrets engine is mounted at "${mountIn.slice(0, 128)}"`);
    if (m.type !== 'kv' || (m.options?.version ?? '2') !== '2') throw invalid(field, `"${m.path}" is a ${m.type} mount; only KV version 2 secrets can be synced`);
    return m;
  }

  /** Link a secret (or refresh an existing link, retrying a failed sync); answers with the destination's associations. */
  async setAssociation(type: DestinationType, name: string, mountIn: string, secretIn: string, canRead: (path: string) => boolean): Promise<Record<string, unknown>> {
    const dest = await this.store.getDest(type, name);
    if (!dest) throw notFound(`destination ${type}/${name} does not exist`);
    if (dest.purge_initiated_at) throw invalid('name', 'destination is being deleted (purge in progress)');
    const secret = secretIn.replace(/^\/+/, '');
    if (secret === '' || secret.endsWith('/')) throw invalid('secret_name', 'secret not found; provide the full path to an existing secret');
    const mount = this.kvMount('mount', mountIn);
    if (!canRead(`${mount.path}data/${secret}`)) throw denied(`permission denied to read the content of the secret ${secret} in mount ${mount.path.replace(/\/$/, '')}`);
    // The latest version is read here (and offered to the first attempt, which then need not read it);
    // a secret whose latest version is deleted still exists when it has metadata.
    const marker = this.syncer.kvChanges;
    const latest = await this.kv.readLatest(mount, secret);
    if (!latest && !(await this.kv.exists(mount, secret))) throw invalid('secret_name', 'secret not found; provide the full path to an existing secret');
    const id = linkId(mount.accessor, secret);
    const key = linkKey(type, name, id);
    if (!this.syncer.hasRoom(key)) throw new QueueFullError((await this.store.config()).queue_capacity);
    const def = DESTINATION_TYPES[type];
    const granularity = dest.options.granularity;
    const template = dest.options.secret_name_template ?? def.defaultTemplates[granularity];
    let staged = false;
    await this.syncer.locks.run(key, async () => {
      const cur = await this.store.getLink(type, name, id);
      const now = this.now();
      const next: LinkRecord = cur
        ? {
            ...cur,
            removing: false,
            generation: cur.generation + 1,
            granularity,
            template,
            mount: mount.path,
            sync_status: 'PENDING',
            updated_at: now,
            entries: Object.fromEntries(Object.entries(cur.entries).map(([k, e]) => [k, { ...e, sync_status: 'PENDING' as const, error: undefined, updated_at: now }])),
          }
        : {
            id,
            dest_type: type,
            dest_name: name,
            accessor: mount.accessor,
            mount: mount.path,
            secret_name: secret,
            granularity,
            template,
            generation: 1,
            created_at: now,
            sync_status: 'PENDING',
            updated_at: now,
            entries: granularity === 'secret-path' ? { '': { sync_status: 'PENDING', updated_at: now, present: false } } : {},
          };
      delete next.error;
      if (cur) await this.store.putLink(next);
      else {
        await this.store.stageLink(next);
        staged = true;
      }
      this.syncer.indexAdd(key);
    });
    try {
      if (latest) this.syncer.offerSecret(key, latest, marker);
      const mark = this.syncer.attemptMark();
      await this.syncer.enqueue(key, { now: true });
      await this.syncer.waitForAttempt(key, this.syncer.tuning.setWaitMs, mark);
    } finally {
      // A new link is stored once, with the outcome of its first attempt, instead of as PENDING
      // first and again with the outcome. If that attempt has not finished (slow provider, sync
      // disabled, wait over), it is stored now as it stands. Either way it is stored before the
      // answer. (A crash before that loses the unanswered link; the provider may then hold the
      // pushed value under a name no link records, as after any interrupted unanswered request.)
      if (staged) await this.syncer.locks.run(key, () => this.store.saveLink(type, name, id));
    }
    return this.associations(type, name);
  }

  /** Unlink a secret: unsync (delete externally), then drop the link; succeeds when already absent (spec 7.12). */
  async removeAssociation(type: DestinationType, name: string, mountIn: string, secretIn: string): Promise<Record<string, unknown>> {
    const dest = await this.store.getDest(type, name);
    if (!dest) throw notFound(`destination ${type}/${name} does not exist`);
    const secret = secretIn.replace(/^\/+/, '');
    if (secret === '') throw invalid('secret_name', 'is required');
    // The mount may be gone (unmounted): fall back to the links' recorded mount path or an accessor.
    let accessor = this.kv.mount(mountIn.replace(/^\/+/, ''))?.accessor;
    if (!accessor) {
      const want = mountIn.replace(/^\/+/, '').replace(/\/?$/, '/');
      for (const l of await this.store.links(type, name)) {
        if (l.secret_name === secret && (l.mount === want || l.accessor === mountIn)) accessor = l.accessor;
      }
    }
    if (!accessor) return this.associations(type, name);
    const id = linkId(accessor, secret);
    const key = linkKey(type, name, id);
    if (!this.syncer.hasRoom(key)) throw new QueueFullError((await this.store.config()).queue_capacity);
    let found = false;
    await this.syncer.locks.run(key, async () => {
      const cur = await this.store.getLink(type, name, id);
      if (!cur) return;
      found = true;
      const now = this.now();
      await this.store.putLink({
        ...cur,
        removing: true,
        generation: cur.generation + 1,
        sync_status: 'PENDING',
        updated_at: now,
        entries: Object.fromEntries(Object.entries(cur.entries).map(([k, e]) => [k, { ...e, sync_status: 'PENDING' as const, error: undefined, updated_at: now }])),
      });
    });
    if (!found) return this.associations(type, name);
    const mark = this.syncer.attemptMark();
    await this.syncer.enqueue(key, { now: true });
    const final = await this.syncer.waitForAttempt(key, this.syncer.tuning.setWaitMs, mark);
    return this.associations(type, name, final && (await this.store.getLink(type, name, id)) === null ? final : undefined);
  }

  /** Every secret with at least one association (LIST sys/sync/associations). */
  async listAssociations(): Promise<Record<string, unknown> | null> {
    const keyInfo: Record<string, Array<Record<string, string>>> = {};
    let links = 0;
    for (const [accessor, secret, keys] of this.syncer.secrets()) {
      let mountPath = this.kv.mount(accessor)?.path;
      if (!mountPath) {
        const [t, n, id] = keys[0]!.split('/') as [string, string, string];
        mountPath = (await this.store.getLink(t, n, id))?.mount ?? `${accessor}/`;
      }
      const k = `${mountPath}${secret}`;
      keyInfo[k] = keys.map((lk) => {
        const [t, n] = lk.split('/') as [string, string];
        return { mount: mountPath!, secret_path: secret, type: t, name: n };
      });
      links += keys.length;
    }
    const keys = Object.keys(keyInfo).sort();
    if (keys.length === 0) return null;
    return { keys, key_info: keyInfo, total_associations: links, total_secrets: keys.length };
  }

  /** Destinations one secret is linked to, with the status of each. */
  async destinationsOf(mountIn: string, secretIn: string): Promise<Record<string, unknown> | null> {
    const m = this.kv.mount(mountIn.replace(/^\/+/, ''));
    if (!m) return null;
    const secret = secretIn.replace(/^\/+/, '');
    const out: Record<string, unknown> = {};
    for (const key of this.syncer.linksOf(m.accessor, secret)) {
      const [t, n, id] = key.split('/') as [string, string, string];
      let l = await this.store.getLink(t, n, id);
      if (!l) continue;
      const activity = this.syncer.activityOf(key);
      if (activity) l = withActivity(l, activity);
      const statuses = Object.values(l.entries).map((e) => e.sync_status);
      out[`${t}/${n}`] = { type: t, name: n, sync_status: statuses.length ? worstStatus(statuses, l.sync_status) : l.sync_status, updated_at: l.updated_at };
    }
    return Object.keys(out).length ? { associated_destinations: out } : null;
  }

  // ---- GitHub Apps (reference sync-wire.md 1.9) ----

  /** Register or update a GitHub App; `app_id` is fixed once set (replace the app instead). */
  async writeGithubApp(name: string, input: { app_id?: number; private_key?: string }): Promise<Record<string, unknown>> {
    if (!DEST_NAME.test(name) || name === '.' || name === '..') throw invalid('name', 'must be 1-128 characters of letters, digits, "_", "." and "-"');
    const existing = await this.store.getApp(name);
    if (input.app_id !== undefined && (!Number.isSafeInteger(input.app_id) || input.app_id <= 0)) throw invalid('app_id', 'must be the numeric id of the GitHub App');
    if (existing && input.app_id !== undefined && input.app_id !== existing.app_id) throw invalid('app_id', 'cannot be changed; register a new app instead');
    const appId = input.app_id ?? existing?.app_id;
    if (appId === undefined) throw invalid('app_id', 'is required');
    const pem = input.private_key ?? existing?.private_key;
    if (!pem) throw invalid('private_key', 'is required');
    let fingerprint: string;
    try {
      const key = createPrivateKey(pem);
      if (key.asymmetricKeyType !== 'rsa') throw new Error('not RSA');
      fingerprint = createHash('sha256').update(createPublicKey(key).export({ type: 'spki', format: 'der' })).digest('base64');
    } catch {
      // Never echo the key: it is the app's credential.
      throw invalid('private_key', "must be the app's RSA private key in PEM (as GitHub generates it)");
    }
    const now = this.now();
    const rec = { name, app_id: appId, private_key: pem, fingerprint, created_at: existing?.created_at ?? now, updated_at: now };
    await this.store.putApp(rec);
    // Destinations using it build their connectors again (new key: new installation tokens).
    if (existing && input.private_key !== undefined) {
      for (const d of await this.store.destNames('repohost')) {
        const dest = await this.store.getDest('repohost', d);
        if (dest?.connection.app_name === name) this.syncer.dropConnector('repohost', d);
      }
    }
    return githubAppView(rec);
  }

  /** A GitHub App as read (key masked), or null. */
  async readGithubApp(name: string): Promise<Record<string, unknown> | null> {
    const a = await this.store.getApp(name);
    return a ? githubAppView(a) : null;
  }

  /** Names of registered GitHub Apps. */
  async listGithubApps(): Promise<Record<string, unknown> | null> {
    const keys = await this.store.appNames();
    return keys.length ? { keys } : null;
  }

  /** Remove a GitHub App; refused while a destination uses it (GitHub itself is not touched). */
  async deleteGithubApp(name: string): Promise<void> {
    for (const d of await this.store.destNames('repohost')) {
      const dest = await this.store.getDest('repohost', d);
      if (dest?.connection.app_name === name) throw invalid(`GitHub App ${name} is used by destination repohost/${d}; change or delete that destination first`);
    }
    await this.store.deleteApp(name);
  }

  // ---- config ----

  /** sys/sync/config. */
  config(): Promise<SyncConfig> {
    return this.store.config();
  }

  /** Merge changes into sys/sync/config and apply them. */
  async updateConfig(changes: Partial<SyncConfig>): Promise<SyncConfig> {
    const cur = await this.store.config();
    const next: SyncConfig = { ...cur };
    if (changes.disabled !== undefined) next.disabled = changes.disabled;
    if (changes.queue_capacity !== undefined) next.queue_capacity = changes.queue_capacity;
    await this.store.putConfig(next);
    this.syncer.configure(next);
    return next;
  }

  /** Reset sys/sync/config to defaults. */
  async resetConfig(): Promise<void> {
    await this.store.deleteConfig();
    this.syncer.configure(DEFAULT_SYNC_CONFIG);
  }

  // ---- KV events ----

  /** React to a KV change: re-sync (write, patch, undelete) or unsync (delete, destroy of the latest, metadata delete). */
  async onKvEvent(e: KvEvent): Promise<void> {
    this.syncer.noteKvChange();
    if (e.kind === 'metadata-write' || e.kind === 'metadata-patch') return;
    if ((e.kind === 'delete' || e.kind === 'destroy') && e.currentVersion !== 0 && e.versions && !e.versions.includes(e.currentVersion)) return;
    for (const key of this.syncer.linksOf(e.mountAccessor, e.path)) {
      const [t, n, id] = key.split('/') as [string, string, string];
      await this.syncer.locks.run(key, async () => {
        const l = await this.store.getLink(t, n, id);
        if (!l || l.removing) return;
        const now = this.now();
        await this.store.putLink({
          ...l,
          sync_status: 'PENDING',
          updated_at: now,
          entries: Object.fromEntries(Object.entries(l.entries).map(([k, st]) => [k, { ...st, sync_status: 'PENDING' as const, updated_at: now }])),
        });
      });
      try {
        await this.syncer.enqueue(key, { now: true });
      } catch (err) {
        // Queue full: the link stays PENDING and the reconciliation scan queues it later.
        this.logger.warn('sync queue full; change will be picked up by reconciliation', { destination: `${t}/${n}`, error: (err as Error).name });
      }
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
function freezePairs(list: ReadonlyArray<ReadonlyArray<readonly [string, Readonly<Record<string, unknown>>]>>): Readonly<Record<string, unknown>> {
  const secrets: Record<string, unknown> = {};
  for (const pairs of list) for (const [k, rec] of pairs) secrets[k] = rec;
  return Object.freeze(secrets);
}

const GO_ESCAPE = /[<>&\u2028\u2029]/g;

const GO_ESCAPE_TEST = /[<>&\u2028\u2029]/;

/** JSON with Go's escaping of <, >, &, U+2028, U+2029 (what the router sends; Vault clients see Go's encoding/json). */
function goJson(value: unknown): string {
  const text = JSON.stringify(value);
  if (!GO_ESCAPE_TEST.test(text)) return text;
  return text.replace(GO_ESCAPE, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
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

/** The read view of a GitHub App: the key masked, its fingerprint shown (reference 1.9). */
function githubAppView(a: GithubAppRecord): Record<string, unknown> {
  return { name: a.name, app_id: a.app_id, private_key: MASK, fingerprint: a.fingerprint };
}

/** A link as shown while the worker is at it: every entry (and the link) in the in-flight status, errors hidden. */
function withActivity(l: LinkRecord, activity: ActivityStatus): LinkRecord {
  const entries: Record<string, EntryState> = {};
  for (const [k, e] of Object.entries(l.entries)) entries[k] = { ...e, sync_status: activity, error: undefined };
  return { ...l, sync_status: activity, error: undefined, entries };
}

/** Check a template for a type and granularity; throws 400 with Vault's wording. */
export function checkTemplate(type: DestinationType, source: string, granularity: Granularity): void {
  let t: NameTemplate;
  try {
    t = NameTemplate.parse(source);
  } catch (e) {
    if (e instanceof TemplateError) throw invalid(`secret name template is invalid: ${e.message}`);
    throw e;
  }
  if (granularity === 'secret-key' && !t.fields.has('SecretKey')) {
    throw invalid('secret name template is invalid: external name template should contain reference to the secret key');
  }
  // A sample rendering catches names that can never be valid (reserved prefix, leading digit).
  const sample = normalizeName(type, t.render({ DestinationType: type, DestinationName: 'dest', NamespacePath: '', NamespaceBaseName: '', NamespaceID: 'root', MountPath: 'kv', MountBaseName: 'kv', MountAccessor: 'kv_1234abcd', SecretPath: 'app/config', SecretBaseName: 'config', SecretKey: 'password' }));
  const problem = nameProblem(type, sample);
  if (problem) throw invalid(`secret name template is invalid: ${problem}`);
}

/** The read view of a destination: sensitive values masked, options as Vault reads them back. */
export function destinationView(d: DestinationRecord): Record<string, unknown> {
  const def = DESTINATION_TYPES[d.type];
  const conn: Record<string, unknown> = {};
  for (const [k, field] of Object.entries(def.fields)) {
    const v = d.connection[k];
    if (field.spec.sensitive) conn[k] = v === undefined || v === '' ? '' : MASK;
    else conn[k] = v ?? '';
  }
  const o = d.options;
  const options: Record<string, unknown> = {
    granularity_level: o.granularity,
    secret_name_template: o.secret_name_template ?? def.defaultTemplates[o.granularity],
    custom_tags: o.custom_tags,
    allowed_ipv4_addresses: o.allowed_ipv4_addresses,
    allowed_ipv6_addresses: o.allowed_ipv6_addresses,
    allowed_ports: o.allowed_ports,
    disable_strict_networking: o.disable_strict_networking,
  };
  const out: Record<string, unknown> = { name: d.name, type: d.type, connection_details: conn, options };
  if (d.purge_initiated_at) out.purge_initiated_at = d.purge_initiated_at;
  if (d.purge_error) out.purge_error = d.purge_error;
  return out;
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? '') === JSON.stringify(b ?? '');
}
