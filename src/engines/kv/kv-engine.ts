/**
 * The KV version 2 domain: versioned secrets on the mount's (barrier-encrypted) storage. No HTTP here;
 * handlers in routes.ts shape the results into Vault's responses.
 *
 * Storage layout (relative to the mount):
 *   config                 engine settings (max_versions, cas_required, delete_version_after)
 *   namekey                32 random bytes keying the path cipher (secret names never reach the disk in clear)
 *   meta/<enc>/<enc>/...   one metadata record per secret: settings, custom metadata, per-version states
 *   versions/<id>/<n>      one record per version (data + created time); <id> is an HMAC of the path
 * Write order keeps readers safe: a new version record is written before the metadata that names it;
 * destroy and prune update the metadata before removing records. The records' shapes and the pure
 * rules over them are in kv-metadata.ts.
 */
import type { EngineEnv, KvEvent } from '../../framework/context.js';
import { internal } from '../../framework/errors.js';
import { invalid } from '../../framework/errors.js';
import { getJSON, putJSON } from '../../storage/backend.js';
import { KeyedLock } from '../../framework/keyed-lock.js';
import { formatRfc3339Nano, goDuration, nowNanos, parseRfc3339 } from './kv-time.js';
import { DEFAULT_MAX_VERSIONS, MESSAGES, checkSecretPath } from './kv-rules.js';
import { mergePatch, subkeysOf } from './merge-patch.js';
import { type PathCipher, loadPathCipher } from './path-cipher.js';
import { KvChangeLog } from './kv-changes.js';
import {
  applyChanges,
  checkCas,
  emptyMeta,
  scheduledDeletion,
  versionMetadata,
  type KvConfig,
  type MetaRecord,
  type MetadataChanges,
  type VersionMetadata,
  type VersionRecord,
  type VersionState,
  type WriteOptions,
} from './kv-metadata.js';

/** Result of reading one version: `gone` when soft-deleted or destroyed (Vault answers 404 with the metadata). */
export type DataRead =
  | { gone: false; data: Record<string, unknown>; metadata: VersionMetadata }
  | { gone: true; metadata: VersionMetadata };

/** Result of a patch: the secret may be missing (404) or its current version gone (404 with metadata). */
export type PatchResult =
  | { kind: 'missing' }
  | { kind: 'gone'; metadata: VersionMetadata }
  | { kind: 'ok'; metadata: VersionMetadata; warnings: string[] };

type EventBody = Pick<KvEvent, 'kind' | 'version' | 'versions' | 'currentVersion'>;

const CONFIG_KEY = 'config';

/** Live state of one KV v2 mount. */
export class KvEngine {
  private readonly locks = new KeyedLock();
  private cipherP: Promise<PathCipher> | null = null;
  private configCache: KvConfig | null = null;

  /** Recent change events of this mount, for `GET MOUNT/events` (keyhold run --watch). */
  readonly changes: KvChangeLog;

  constructor(readonly env: EngineEnv) {
    this.changes = new KvChangeLog(env.events, env.mount.accessor);
  }

  /** Nothing to flush: every change is durable when its call resolves. */
  async close(): Promise<void> {
    this.changes.close();
  }

  /** Another node changed `key` (cluster standby): only the engine config is cached here. */
  invalidate(key: string): void {
    if (key === CONFIG_KEY) this.configCache = null;
  }

  // ---- engine config ----

  /** Current engine settings (defaults when never written). */
  async config(): Promise<KvConfig> {
    if (this.configCache) return { ...this.configCache };
    const stored = await getJSON<Partial<KvConfig>>(this.env.storage, CONFIG_KEY);
    this.configCache = {
      maxVersions: stored?.maxVersions ?? 0,
      casRequired: stored?.casRequired ?? false,
      deleteVersionAfter: stored?.deleteVersionAfter ?? 0,
    };
    return { ...this.configCache };
  }

  /** Change engine settings; fields left undefined keep their value. */
  async setConfig(changes: Partial<KvConfig>): Promise<void> {
    await this.locks.run('\0config', async () => {
      const cur = await this.config();
      const next: KvConfig = {
        maxVersions: changes.maxVersions ?? cur.maxVersions,
        casRequired: changes.casRequired ?? cur.casRequired,
        // Vault: negative disables for every key, zero clears the setting.
        deleteVersionAfter:
          changes.deleteVersionAfter === undefined
            ? cur.deleteVersionAfter
            : changes.deleteVersionAfter < 0
              ? -1
              : changes.deleteVersionAfter,
      };
      await putJSON(this.env.storage, CONFIG_KEY, next);
      this.configCache = next;
    });
  }

  /** The config as Vault's `GET config` shows it. */
  async configView(): Promise<Record<string, unknown>> {
    const c = await this.config();
    return {
      cas_required: c.casRequired,
      delete_version_after: goDuration(c.deleteVersionAfter),
      max_versions: c.maxVersions,
    };
  }

  // ---- data ----

  /** True when the secret has a metadata record (drives create vs update in the ACL). */
  async exists(path: string): Promise<boolean> {
    if (!validPath(path)) return false;
    return (await this.getMeta(path)) !== null;
  }

  /** Read version `version` (0 = current); null when the secret or that version does not exist. */
  async readData(path: string, version = 0): Promise<DataRead | null> {
    checkSecretPath(path);
    return this.locks.run(path, async () => {
      const meta = await this.getMeta(path);
      if (!meta) return null;
      const n = version > 0 ? version : meta.current_version;
      const vm = meta.versions[n];
      if (!vm) return null;
      const metadata = versionMetadata(meta, n);
      if (this.isGone(vm)) return { gone: true, metadata };
      const rec = await this.getVersion(path, n);
      return { gone: false, data: rec.data, metadata };
    });
  }

  /** Write a new version (check-and-set per `options.cas`, the engine config and the secret's settings). */
  async writeData(
    path: string,
    data: Record<string, unknown>,
    options: WriteOptions | undefined,
  ): Promise<{ metadata: VersionMetadata; warnings: string[] }> {
    checkSecretPath(path);
    const cfg = await this.config();
    return this.mutate(path, async () => {
      const meta = (await this.getMeta(path)) ?? emptyMeta();
      checkCas(options, cfg, meta);
      return this.addVersion(path, meta, data, cfg, 'data-write');
    });
  }

  /** Merge-patch the current version into a new one; the secret must exist and its current version must be live. */
  async patchData(
    path: string,
    patch: Record<string, unknown>,
    options: WriteOptions | undefined,
  ): Promise<PatchResult> {
    checkSecretPath(path);
    const cfg = await this.config();
    return this.mutate(path, async () => {
      const meta = await this.getMeta(path);
      if (!meta) return { result: { kind: 'missing' } as PatchResult };
      checkCas(options, cfg, meta);
      const vm = meta.versions[meta.current_version];
      if (!vm) return { result: { kind: 'missing' } as PatchResult };
      if (this.isGone(vm))
        return { result: { kind: 'gone', metadata: versionMetadata(meta, meta.current_version) } as PatchResult };
      const current = await this.getVersion(path, meta.current_version);
      const merged = mergePatch(current.data, patch) as Record<string, unknown>;
      const { result, event } = await this.addVersion(path, meta, merged, cfg, 'data-patch');
      return { result: { kind: 'ok', ...result } as PatchResult, event };
    });
  }

  /** Soft-delete the current version (`DELETE data/:path`); a no-op when missing or already deleted. */
  async deleteLatest(path: string): Promise<void> {
    checkSecretPath(path);
    await this.mutate(path, async () => {
      const meta = await this.getMeta(path);
      if (!meta) return { result: undefined };
      const lv = meta.versions[meta.current_version];
      if (!lv || this.isGone(lv)) return { result: undefined };
      lv.deletion_time = this.nowString();
      await this.putMeta(path, meta);
      return {
        result: undefined,
        event: { kind: 'data-delete', version: meta.current_version, currentVersion: meta.current_version },
      };
    });
  }

  /** Soft-delete the listed versions; unknown, destroyed or already deleted versions are skipped. */
  async deleteVersions(path: string, versions: number[]): Promise<void> {
    checkSecretPath(path);
    if (versions.length === 0) throw invalid(MESSAGES.noVersions);
    await this.mutate(path, async () => {
      const meta = await this.getMeta(path);
      if (!meta) return { result: undefined };
      const now = this.nowString();
      for (const n of versions) {
        const vm = meta.versions[n];
        if (!vm || this.isGone(vm)) continue;
        vm.deletion_time = now;
      }
      await this.putMeta(path, meta);
      return {
        result: undefined,
        event: {
          kind: 'delete',
          version: meta.current_version,
          versions: uniq(versions),
          currentVersion: meta.current_version,
        },
      };
    });
  }

  /** Undo soft deletes of the listed versions (destroyed ones stay destroyed); delete_version_after restarts. */
  async undeleteVersions(path: string, versions: number[]): Promise<void> {
    checkSecretPath(path);
    if (versions.length === 0) throw invalid(MESSAGES.noVersions);
    const cfg = await this.config();
    await this.mutate(path, async () => {
      const meta = await this.getMeta(path);
      if (!meta) return { result: undefined };
      const now = nowNanos(this.env.clock);
      for (const n of versions) {
        const vm = meta.versions[n];
        if (!vm || vm.destroyed) continue;
        vm.deletion_time = scheduledDeletion(now, cfg, meta);
      }
      await this.putMeta(path, meta);
      return {
        result: undefined,
        event: {
          kind: 'undelete',
          version: meta.current_version,
          versions: uniq(versions),
          currentVersion: meta.current_version,
        },
      };
    });
  }

  /** Permanently remove the data of the listed versions (their metadata stays, marked destroyed). */
  async destroyVersions(path: string, versions: number[]): Promise<void> {
    checkSecretPath(path);
    if (versions.length === 0) throw invalid(MESSAGES.noVersionsDestroy);
    await this.mutate(path, async () => {
      const meta = await this.getMeta(path);
      if (!meta) return { result: undefined };
      const hit: number[] = [];
      for (const n of versions) {
        const vm = meta.versions[n];
        if (!vm) continue;
        vm.destroyed = true;
        hit.push(n);
      }
      await this.putMeta(path, meta);
      const cipher = await this.cipher();
      for (const n of uniq(hit)) await this.env.storage.delete(versionKey(cipher, path, n));
      return {
        result: undefined,
        event: {
          kind: 'destroy',
          version: meta.current_version,
          versions: uniq(versions),
          currentVersion: meta.current_version,
        },
      };
    });
  }

  /** The structure of a version with values replaced by null; same null/gone cases as readData. */
  async subkeys(
    path: string,
    version: number,
    depth: number,
  ): Promise<{ gone: boolean; subkeys: Record<string, unknown> | null; metadata: VersionMetadata } | null> {
    const r = await this.readData(path, version);
    if (!r) return null;
    return r.gone
      ? { gone: true, subkeys: null, metadata: r.metadata }
      : { gone: false, subkeys: subkeysOf(r.data, depth), metadata: r.metadata };
  }

  // ---- metadata ----

  /** Metadata as Vault's `GET metadata/:path` shows it; null when the secret does not exist. */
  async readMetadata(path: string): Promise<Record<string, unknown> | null> {
    checkSecretPath(path);
    const meta = await this.locks.run(path, () => this.getMeta(path));
    if (!meta) return null;
    const versions: Record<string, VersionState> = {};
    for (const n of Object.keys(meta.versions)
      .map(Number)
      .sort((a, b) => a - b))
      versions[String(n)] = { ...meta.versions[n]! };
    return {
      cas_required: meta.cas_required,
      created_time: meta.created_time,
      current_version: meta.current_version,
      custom_metadata: meta.custom_metadata,
      delete_version_after: goDuration(meta.delete_version_after),
      max_versions: meta.max_versions,
      oldest_version: meta.oldest_version,
      updated_time: meta.updated_time,
      versions,
    };
  }

  /** Create or change a secret's settings (no new version); returns Vault's warnings. */
  async writeMetadata(path: string, changes: MetadataChanges): Promise<string[]> {
    checkSecretPath(path);
    if (Object.values(changes).every((v) => v === undefined)) return [];
    const cfg = await this.config();
    const warnings = changes.casRequired === false && cfg.casRequired ? [MESSAGES.casIgnored] : [];
    await this.mutate(path, async () => {
      let meta = await this.getMeta(path);
      if (!meta) {
        const now = this.nowString();
        meta = { ...emptyMeta(), created_time: now, updated_time: now };
      }
      applyChanges(meta, changes, false);
      await this.putMeta(path, meta);
      return {
        result: undefined,
        event: { kind: 'metadata-write', version: meta.current_version, currentVersion: meta.current_version },
      };
    });
    return warnings;
  }

  /** Merge-patch a secret's settings; null when the secret does not exist (404). */
  async patchMetadata(path: string, changes: MetadataChanges): Promise<string[] | null> {
    checkSecretPath(path);
    const cfg = await this.config();
    return this.mutate(path, async () => {
      const meta = await this.getMeta(path);
      if (!meta) return { result: null };
      applyChanges(meta, changes, true);
      await this.putMeta(path, meta);
      const warnings = changes.casRequired === false && cfg.casRequired ? [MESSAGES.casIgnored] : [];
      return {
        result: warnings,
        event: { kind: 'metadata-patch', version: meta.current_version, currentVersion: meta.current_version },
      };
    });
  }

  /** Remove a secret entirely: every version record and the metadata. */
  async deleteMetadata(path: string): Promise<void> {
    checkSecretPath(path);
    await this.mutate(path, async () => {
      const meta = await this.getMeta(path);
      if (!meta) return { result: undefined };
      const cipher = await this.cipher();
      const folder = `versions/${cipher.idOf(path)}/`;
      for (const name of await this.env.storage.list(folder))
        if (!name.endsWith('/')) await this.env.storage.delete(folder + name);
      await this.env.storage.delete(metaKey(cipher, path));
      return {
        result: undefined,
        event: { kind: 'metadata-delete', version: meta.current_version, currentVersion: 0 },
      };
    });
  }

  /** Names under folder `path` ("" = mount root): secrets, and folders with a trailing "/". Sorted. */
  async list(path: string): Promise<string[]> {
    if (path !== '') checkSecretPath(path);
    const cipher = await this.cipher();
    const prefix = path === '' ? 'meta/' : `meta/${cipher.encryptPath(path)}/`;
    const out: string[] = [];
    for (const name of await this.env.storage.list(prefix)) {
      const folder = name.endsWith('/');
      const plain = cipher.decryptSegment(path, folder ? name.slice(0, -1) : name);
      if (plain !== null) out.push(folder ? plain + '/' : plain);
    }
    return out.sort();
  }

  // ---- for secret sync ----

  /** Data and number of the current version; null when the secret is missing or its current version is deleted or destroyed. */
  async readLatest(path: string): Promise<{ data: Record<string, unknown>; version: number } | null> {
    if (!validPath(path)) return null;
    const r = await this.readData(path, 0);
    return r && !r.gone ? { data: r.data, version: r.metadata.version } : null;
  }

  /** Current version number and custom metadata of a secret; null when it does not exist. */
  async metadataOf(path: string): Promise<{ currentVersion: number; customMetadata: Record<string, string> } | null> {
    if (!validPath(path)) return null;
    const meta = await this.locks.run(path, () => this.getMeta(path));
    return meta ? { currentVersion: meta.current_version, customMetadata: { ...(meta.custom_metadata ?? {}) } } : null;
  }

  // ---- internals ----

  /** Run a change under the path's lock, then emit its event (after the lock, so listeners may read). */
  private async mutate<T>(path: string, fn: () => Promise<{ result: T; event?: EventBody }>): Promise<T> {
    const { result, event } = await this.locks.run(path, fn);
    if (event) {
      this.env.events.emit('kv', {
        ...event,
        mountAccessor: this.env.mount.accessor,
        mountPath: this.env.mount.path,
        path,
      });
    }
    return result;
  }

  /** Append a version (caller holds the lock and checked CAS), prune beyond max_versions. */
  private async addVersion(
    path: string,
    meta: MetaRecord,
    data: Record<string, unknown>,
    cfg: KvConfig,
    kind: 'data-write' | 'data-patch',
  ): Promise<{ result: { metadata: VersionMetadata; warnings: string[] }; event: EventBody }> {
    const cipher = await this.cipher();
    const ns = nowNanos(this.env.clock);
    const created = formatRfc3339Nano(ns);
    const pruneFrom = meta.prune_from ?? Math.max(1, meta.oldest_version);
    const n = meta.current_version + 1;
    await putJSON(this.env.storage, versionKey(cipher, path, n), {
      data,
      created_time: created,
    } satisfies VersionRecord);
    meta.current_version = n;
    meta.versions[n] = { created_time: created, deletion_time: scheduledDeletion(ns, cfg, meta), destroyed: false };
    meta.updated_time = created;
    if (!meta.created_time) meta.created_time = created;
    // Vault (path_data.go AddVersion): the larger of the secret's and the engine's max_versions, else 10.
    const max =
      Math.max(meta.max_versions, cfg.maxVersions) > 0
        ? Math.max(meta.max_versions, cfg.maxVersions)
        : DEFAULT_MAX_VERSIONS;
    if (meta.current_version - meta.oldest_version >= max) {
      const last = meta.current_version - max;
      for (let i = meta.oldest_version; i <= last; i++) delete meta.versions[i];
      meta.oldest_version = last + 1;
    }
    delete meta.prune_from;
    await this.putMeta(path, meta);
    const warnings: string[] = [];
    // Remove records of pruned versions, oldest first; a failure is retried on the next write.
    for (let i = pruneFrom; i < meta.oldest_version; i++) {
      try {
        await this.env.storage.delete(versionKey(cipher, path, i));
      } catch {
        meta.prune_from = i;
        await this.putMeta(path, meta).catch(() => undefined);
        warnings.push(MESSAGES.cleanupFailed);
        break;
      }
    }
    return { result: { metadata: versionMetadata(meta, n), warnings }, event: { kind, version: n, currentVersion: n } };
  }

  private isGone(vm: VersionState): boolean {
    if (vm.destroyed) return true;
    // `<=`: a soft delete takes effect in the same millisecond (the stored time has sub-ms digits we drop).
    return vm.deletion_time !== '' && parseRfc3339(vm.deletion_time) <= this.env.clock.now();
  }

  private nowString(): string {
    return formatRfc3339Nano(nowNanos(this.env.clock));
  }

  private cipher(): Promise<PathCipher> {
    this.cipherP ??= loadPathCipher(this.env.storage).catch((e) => {
      this.cipherP = null;
      throw e;
    });
    return this.cipherP;
  }

  private async getMeta(path: string): Promise<MetaRecord | null> {
    return getJSON<MetaRecord>(this.env.storage, metaKey(await this.cipher(), path));
  }

  private async putMeta(path: string, meta: MetaRecord): Promise<void> {
    await putJSON(this.env.storage, metaKey(await this.cipher(), path), meta);
  }

  private async getVersion(path: string, n: number): Promise<VersionRecord> {
    const rec = await getJSON<VersionRecord>(this.env.storage, versionKey(await this.cipher(), path, n));
    if (!rec) throw internal('could not find version data');
    return rec;
  }
}

function metaKey(cipher: PathCipher, path: string): string {
  return `meta/${cipher.encryptPath(path)}`;
}

function versionKey(cipher: PathCipher, path: string, n: number): string {
  return `versions/${cipher.idOf(path)}/${n}`;
}

function validPath(path: string): boolean {
  try {
    checkSecretPath(path);
    return true;
  } catch {
    return false;
  }
}

function uniq(ns: number[]): number[] {
  return [...new Set(ns)].sort((a, b) => a - b);
}
