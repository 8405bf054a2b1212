/**
 * Associations (a KV v2 secret linked to a destination): set and remove, which store the link and
 * queue its operation, then wait a little for its first attempt (reference sync-wire.md 1.7-1.8);
 * the secret-wide lists; and the KV change events that make links due again. The maps set and
 * remove answer with come from the cached view (association-view.ts).
 */
import type { Clock, KvEvent, Logger, MountInfo } from '../framework/context.js';
import { denied, invalid, notFound } from '../framework/errors.js';
import type { AssociationViews } from './association-view.js';
import { DESTINATION_TYPES } from './destinations/index.js';
import type { KvSource } from './kv-source.js';
import { linkForRemove, linkForSet, markedPending } from './link-records.js';
import { QueueFullError } from './op-queue.js';
import type { SyncStore } from './store.js';
import {
  linkId,
  linkKey,
  worstStatus,
  type ActivityStatus,
  type DestinationType,
  type EntryState,
  type LinkRecord,
} from './types.js';
import type { Syncer } from './worker.js';
import { shownType } from './type-aliases.js';

/** Set, remove and list associations; react to KV changes. */
export class AssociationService {
  constructor(
    private readonly store: SyncStore,
    private readonly syncer: Syncer,
    private readonly views: AssociationViews,
    private readonly kv: KvSource,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }

  private kvMount(field: string, mountIn: string): MountInfo {
    const m = mountIn.trim() === '' ? undefined : this.kv.mount(mountIn.replace(/^\/+/, ''));
    if (!m) throw invalid(field, `no secrets engine is mounted at "${mountIn.slice(0, 128)}"`);
    if (m.type !== 'kv' || (m.options?.version ?? '2') !== '2')
      throw invalid(field, `"${m.path}" is a ${m.type} mount; only KV version 2 secrets can be synced`);
    return m;
  }

  /** Link a secret (or refresh an existing link, retrying a failed sync); answers with the destination's associations. */
  async set(
    type: DestinationType,
    name: string,
    mountIn: string,
    secretIn: string,
    canRead: (path: string) => boolean,
  ): Promise<Record<string, unknown>> {
    const dest = await this.store.getDest(type, name);
    if (!dest) throw notFound(`destination ${type}/${name} does not exist`);
    if (dest.purge_initiated_at) throw invalid('name', 'destination is being deleted (purge in progress)');
    const secret = secretIn.replace(/^\/+/, '');
    if (secret === '' || secret.endsWith('/'))
      throw invalid('secret_name', 'secret not found; provide the full path to an existing secret');
    const mount = this.kvMount('mount', mountIn);
    if (!canRead(`${mount.path}data/${secret}`))
      throw denied(
        `permission denied to read the content of the secret ${secret} in mount ${mount.path.replace(/\/$/, '')}`,
      );
    // The latest version is read here (and offered to the first attempt, which then need not read it);
    // a secret whose latest version is deleted still exists when it has metadata.
    const marker = this.syncer.kvChanges;
    const latest = await this.kv.readLatest(mount, secret);
    if (!latest && !(await this.kv.exists(mount, secret)))
      throw invalid('secret_name', 'secret not found; provide the full path to an existing secret');
    const id = linkId(mount.accessor, secret);
    const key = linkKey(type, name, id);
    if (!this.syncer.hasRoom(key)) throw new QueueFullError((await this.store.config()).queue_capacity);
    const granularity = dest.options.granularity;
    const template = dest.options.secret_name_template ?? DESTINATION_TYPES[type].defaultTemplates[granularity];
    let staged = false;
    await this.syncer.locks.run(key, async () => {
      const cur = await this.store.getLink(type, name, id);
      const next = linkForSet(cur, { id, type, name, mount, secret, granularity, template }, this.now());
      if (cur) await this.store.putLink(next);
      else {
        await this.store.stageLink(next);
        staged = true;
      }
      this.syncer.index.add(key);
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
    return this.views.associations(type, name);
  }

  /** Unlink a secret: unsync (delete externally), then drop the link; succeeds when already absent (spec 7.12). */
  async remove(
    type: DestinationType,
    name: string,
    mountIn: string,
    secretIn: string,
  ): Promise<Record<string, unknown>> {
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
    if (!accessor) return this.views.associations(type, name);
    const id = linkId(accessor, secret);
    const key = linkKey(type, name, id);
    if (!this.syncer.hasRoom(key)) throw new QueueFullError((await this.store.config()).queue_capacity);
    let found = false;
    await this.syncer.locks.run(key, async () => {
      const cur = await this.store.getLink(type, name, id);
      if (!cur) return;
      found = true;
      await this.store.putLink(linkForRemove(cur, this.now()));
    });
    if (!found) return this.views.associations(type, name);
    const mark = this.syncer.attemptMark();
    await this.syncer.enqueue(key, { now: true });
    const final = await this.syncer.waitForAttempt(key, this.syncer.tuning.setWaitMs, mark);
    return this.views.associations(
      type,
      name,
      final && (await this.store.getLink(type, name, id)) === null ? final : undefined,
    );
  }

  /** Every secret with at least one association (LIST sys/sync/associations). */
  async list(): Promise<Record<string, unknown> | null> {
    const keyInfo: Record<string, Array<Record<string, string>>> = {};
    let links = 0;
    for (const [accessor, secret, keys] of this.syncer.index.secrets()) {
      let mountPath = this.kv.mount(accessor)?.path;
      if (!mountPath) {
        const [t, n, id] = keys[0]!.split('/') as [string, string, string];
        mountPath = (await this.store.getLink(t, n, id))?.mount ?? `${accessor}/`;
      }
      const k = `${mountPath}${secret}`;
      keyInfo[k] = [];
      for (const lk of keys) {
        const [t, n] = lk.split('/') as [string, string];
        keyInfo[k].push({ mount: mountPath, secret_path: secret, type: await this.shownTypeOf(t, n), name: n });
      }
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
    for (const key of this.syncer.index.linksOf(m.accessor, secret)) {
      const [t, n, id] = key.split('/') as [string, string, string];
      let l = await this.store.getLink(t, n, id);
      if (!l) continue;
      const activity = this.syncer.activityOf(key);
      if (activity) l = withActivity(l, activity);
      const statuses = Object.values(l.entries).map((e) => e.sync_status);
      const shown = await this.shownTypeOf(t, n);
      out[`${shown}/${n}`] = {
        type: shown,
        name: n,
        sync_status: statuses.length ? worstStatus(statuses, l.sync_status) : l.sync_status,
        updated_at: l.updated_at,
      };
    }
    return Object.keys(out).length ? { associated_destinations: out } : null;
  }

  /** The type id destination `t/n` was created under (type-aliases.ts). */
  private async shownTypeOf(t: string, n: string): Promise<string> {
    const d = await this.store.getDest(t, n);
    return d ? shownType(d) : t;
  }

  /** React to a KV change: re-sync (write, patch, undelete) or unsync (delete, destroy of the latest, metadata delete). */
  async onKvEvent(e: KvEvent): Promise<void> {
    this.syncer.noteKvChange();
    if (e.kind === 'metadata-write' || e.kind === 'metadata-patch') return;
    if (
      (e.kind === 'delete' || e.kind === 'destroy') &&
      e.currentVersion !== 0 &&
      e.versions &&
      !e.versions.includes(e.currentVersion)
    )
      return;
    for (const key of this.syncer.index.linksOf(e.mountAccessor, e.path)) {
      const [t, n, id] = key.split('/') as [string, string, string];
      await this.syncer.locks.run(key, async () => {
        const l = await this.store.getLink(t, n, id);
        if (!l || l.removing) return;
        await this.store.putLink(markedPending(l, this.now()));
      });
      try {
        await this.syncer.enqueue(key, { now: true });
      } catch (err) {
        // Queue full: the link stays PENDING and the reconciliation scan queues it later.
        this.logger.warn('sync queue full; change will be picked up by reconciliation', {
          destination: `${t}/${n}`,
          error: (err as Error).name,
        });
      }
    }
  }
}

/** A link as shown while the worker is at it: every entry (and the link) in the in-flight status, errors hidden. */
function withActivity(l: LinkRecord, activity: ActivityStatus): LinkRecord {
  const entries: Record<string, EntryState> = {};
  for (const [k, e] of Object.entries(l.entries)) entries[k] = { ...e, sync_status: activity, error: undefined };
  return { ...l, sync_status: activity, error: undefined, entries };
}
