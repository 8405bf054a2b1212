/**
 * One attempt at bringing one link to its desired state: read the link and its destination, read
 * the secret's latest version, then put each entry at the provider (or delete them all when the
 * link is being removed, its destination purged, or the secret is gone), and delete names that
 * are no longer wanted. An entry whose record shows this value already written under this name
 * (written-marks.ts) is not sent again, so a retry resumes where the last attempt stopped. It
 * stores nothing: it returns the outcome (see apply-outcome.ts), which the worker applies to the
 * record as it stands then.
 */
import type { Clock, MountInfo } from '../framework/context.js';
import { isKeyholdError } from '../framework/errors.js';
import type { LinkOutcome, LinkStatus } from './apply-outcome.js';
import type { Connector } from './destinations/common.js';
import { SyncFailure, failureFromError } from './failure.js';
import type { KvSource } from './kv-source.js';
import { nameProblem, normalizeName, valueProblem } from './name-rules.js';
import type { SecretOffers, SecretVersion } from './secret-offers.js';
import type { SyncStore } from './store.js';
import { NameTemplate, type TemplateVars } from './templates.js';
import {
  parseLinkKey,
  worstStatus,
  type ActivityStatus,
  type DestinationRecord,
  type EntryState,
  type LinkRecord,
} from './types.js';
import { entriesOf } from './values.js';
import { alreadyWritten, unmarked, valueMac } from './written-marks.js';

/** What an attempt needs. */
export interface LinkSyncDeps {
  store: SyncStore;
  kv: KvSource;
  clock: Clock;
  offers: SecretOffers;
  /** The destination's connector, each provider call in a slot; `onCall` runs as a call starts. Throws on a bad configuration. */
  connectorFor(dest: DestinationRecord, onCall: () => void): Connector;
  /** The link's in-flight status (shown from the moment a provider call holds a slot). */
  setActivity(a: ActivityStatus): void;
}

/** What an attempt came to. */
export type LinkAttempt =
  /** No link record: nothing to do. */
  | { kind: 'missing' }
  /** The destination was force-deleted: the link goes with it. */
  | { kind: 'orphan' }
  /** The attempt ran; `outcome` is to be applied to the link record. */
  | { kind: 'done'; dest: DestinationRecord; outcome: LinkOutcome };

/** Run one attempt on the link `key`. */
export async function syncLink(key: string, signal: AbortSignal, deps: LinkSyncDeps): Promise<LinkAttempt> {
  const { type, name, id } = parseLinkKey(key);
  const link = await deps.store.getLink(type, name, id);
  if (!link) return { kind: 'missing' };
  const dest = await deps.store.getDest(type, name);
  if (!dest) return { kind: 'orphan' };
  const run = new LinkSync(key, link, dest, signal, deps);
  await run.run();
  return { kind: 'done', dest, outcome: run.outcome() };
}

/** The state of one attempt while it runs. */
class LinkSync {
  private readonly results = new Map<string, EntryState | null>();
  private linkStatus: LinkStatus | null = null;
  private retry: SyncFailure | undefined;
  private syncedVersion: number | undefined;
  private removeLink = false;
  /** Shown from the moment a provider call of this attempt holds a slot. */
  private activity: ActivityStatus = 'SYNCING';

  constructor(
    private readonly key: string,
    private readonly link: LinkRecord,
    private readonly dest: DestinationRecord,
    private readonly signal: AbortSignal,
    private readonly deps: LinkSyncDeps,
  ) {}

  outcome(): LinkOutcome {
    return {
      results: this.results,
      linkStatus: this.linkStatus,
      retry: this.retry,
      syncedVersion: this.syncedVersion,
      removeLink: this.removeLink,
      generation: this.link.generation,
    };
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  /** Note a failure; the first retryable one makes the attempt one to retry (and stops further calls). */
  private fail(f: SyncFailure): void {
    if (f.retryable && !this.retry) this.retry = f;
  }

  async run(): Promise<void> {
    let connector: Connector;
    try {
      connector = this.deps.connectorFor(this.dest, () => this.deps.setActivity(this.activity));
    } catch (e) {
      const f =
        isKeyholdError(e) && e.kind === 'invalid'
          ? new SyncFailure('CLIENT_SIDE_ERROR', `destination configuration: ${e.message}`)
          : failureFromError(e, 'connector');
      this.linkStatus = { status: f.status, error: f.message };
      return;
    }
    if (this.link.removing || this.dest.purge_initiated_at) await this.remove(connector);
    else await this.sync(connector);
  }

  /** Remove or purge: delete every entry, then the link may go. */
  private async remove(c: Connector): Promise<void> {
    this.activity = 'UNSYNCING';
    await this.unsyncAll(c);
    const results = this.results;
    const allGone = Object.keys(this.link.entries).every((sub) => results.get(sub)?.present === false);
    if (allGone) this.removeLink = true;
    else if (!this.retry)
      this.linkStatus = {
        status: worstStatus(
          [...results.values()].map((r) => r!.sync_status),
          'UNKNOWN',
        ),
        error: [...results.values()].find((r) => r?.error)?.error,
      };
  }

  /** Bring the provider in line with the secret's latest version (or its absence). */
  private async sync(c: Connector): Promise<void> {
    const mount = this.deps.kv.mount(this.link.accessor);
    if (!mount) {
      this.linkStatus = {
        status: 'INTERNAL_VAULT_ERROR',
        error: `mount with accessor ${this.link.accessor} no longer exists`,
      };
      return;
    }
    let secret: SecretVersion | null;
    let macKey: Buffer;
    try {
      macKey = await this.deps.store.valueMacKey();
    } catch (e) {
      const f = new SyncFailure(
        'INTERNAL_VAULT_ERROR',
        `reading sync state failed: ${isKeyholdError(e) ? e.message : ((e as Error)?.name ?? 'error')}`,
        { retryable: true },
      );
      this.fail(f);
      this.linkStatus = { status: f.status, error: f.message };
      return;
    }
    try {
      secret = this.deps.offers.take(this.key) ?? (await this.deps.kv.readLatest(mount, this.link.secret_name));
    } catch (e) {
      const f = new SyncFailure(
        'INTERNAL_VAULT_ERROR',
        `reading the secret failed: ${isKeyholdError(e) ? e.message : ((e as Error)?.name ?? 'error')}`,
        { retryable: true },
      );
      this.fail(f);
      this.linkStatus = { status: f.status, error: f.message };
      return;
    }
    if (secret === null) {
      this.activity = 'UNSYNCING';
      await this.unsyncAll(c);
      if (!this.retry) {
        this.linkStatus = { status: 'UNSYNCED' };
        this.syncedVersion = 0;
      }
      return;
    }
    this.activity = 'SYNCING';
    const desired = entriesOf(secret.data, this.link.granularity);
    await this.putEntries(c, desired, templateVars(this.dest, mount, this.link), macKey);
    await this.removeUnwanted(c, desired);
    if (!this.retry) this.syncedVersion = secret.version;
    this.linkStatus = null;
    if (desired.size === 0 && !this.retry) this.linkStatus = { status: 'SYNCED' };
  }

  /** Delete every entry the link has at the provider. */
  private async unsyncAll(c: Connector): Promise<void> {
    for (const [sub, st] of Object.entries(this.link.entries)) {
      if (this.retry) break;
      if (!st.present || !st.external_name) {
        this.results.set(sub, {
          ...unmarked(st),
          sync_status: 'UNSYNCED',
          error: undefined,
          updated_at: this.now(),
          present: false,
        });
        continue;
      }
      try {
        await c.remove(st.external_name, this.signal);
        this.results.set(sub, {
          sync_status: 'UNSYNCED',
          updated_at: this.now(),
          external_name: st.external_name,
          present: false,
        });
      } catch (e) {
        const f = failureFromError(e, 'unsync');
        this.fail(f);
        this.results.set(sub, { ...unmarked(st), sync_status: f.status, error: f.message, updated_at: this.now() });
      }
    }
  }

  /**
   * Put each wanted entry under its rendered name (deleting the previous name when it changed),
   * except those whose record shows this value already written there for this generation of the
   * link and revision of the destination: a retry goes on where the last attempt stopped.
   */
  private async putEntries(
    c: Connector,
    desired: Map<string, string>,
    vars: TemplateVars,
    macKey: Buffer,
  ): Promise<void> {
    const { dest, link } = this;
    const template = parsedTemplate(link.template);
    for (const [sub, value] of desired) {
      const old = link.entries[sub];
      if (this.retry) {
        this.results.set(sub, old ?? { sync_status: 'PENDING', updated_at: this.now(), present: false });
        continue;
      }
      const extName = normalizeName(dest.type, template.render({ ...vars, SecretKey: sub }));
      const problem = nameProblem(dest.type, extName) ?? valueProblem(dest.type, value);
      if (problem) {
        this.results.set(sub, {
          ...(old ?? { present: false }),
          sync_status: 'CLIENT_SIDE_ERROR',
          error: problem,
          updated_at: this.now(),
        });
        continue;
      }
      const mark = {
        mac: valueMac(macKey, this.key, sub, extName, value),
        generation: link.generation,
        revision: dest.revision,
      };
      if (alreadyWritten(old, extName, mark)) {
        this.results.set(sub, { ...old!, sync_status: 'SYNCED', error: undefined, updated_at: this.now() });
        continue;
      }
      try {
        // No record of having written this name: the connector may try "create" first.
        await c.put(extName, value, this.signal, { fresh: !(old?.present && old.external_name === extName) });
        let state: EntryState = {
          sync_status: 'SYNCED',
          updated_at: this.now(),
          external_name: extName,
          present: true,
          written: mark,
        };
        if (old?.present && old.external_name && old.external_name !== extName) {
          // Template or granularity changed on refresh: the old name goes (reference 1.5.1).
          try {
            await c.remove(old.external_name, this.signal);
          } catch (e) {
            const f = failureFromError(e, 'removing the previous name');
            state = { ...state, sync_status: f.status, error: f.message };
            this.fail(f);
          }
        }
        this.results.set(sub, state);
      } catch (e) {
        const f = failureFromError(e, 'sync');
        this.fail(f);
        this.results.set(sub, {
          ...unmarked(old ?? { sync_status: 'PENDING', updated_at: '', present: false }),
          sync_status: f.status,
          error: f.message,
          updated_at: this.now(),
        });
      }
    }
  }

  /** Keys removed from the secret (secret-key granularity), or the other granularity's entries. */
  private async removeUnwanted(c: Connector, desired: Map<string, string>): Promise<void> {
    for (const [sub, st] of Object.entries(this.link.entries)) {
      if (desired.has(sub)) continue;
      if (this.retry || !st.present || !st.external_name) {
        this.results.set(sub, this.retry && st.present ? st : null);
        continue;
      }
      try {
        await c.remove(st.external_name, this.signal);
        this.results.set(sub, null);
      } catch (e) {
        const f = failureFromError(e, 'unsync of a removed key');
        this.fail(f);
        this.results.set(sub, { ...unmarked(st), sync_status: f.status, error: f.message, updated_at: this.now() });
      }
    }
  }
}

/** Template variables of a link's names, except SecretKey. */
function templateVars(dest: DestinationRecord, mount: MountInfo, link: LinkRecord): TemplateVars {
  const mountPath = mount.path.replace(/\/$/, '');
  return {
    DestinationType: dest.type,
    DestinationName: dest.name,
    NamespacePath: '',
    NamespaceBaseName: '',
    NamespaceID: 'root',
    MountPath: mountPath,
    MountBaseName: mountPath.split('/').pop() ?? '',
    MountAccessor: mount.accessor,
    SecretPath: link.secret_name,
    SecretBaseName: link.secret_name.split('/').pop() ?? '',
  };
}

/** Parsed name templates by source (a destination's links share one; parsing per operation showed in profiles). */
const templates = new Map<string, NameTemplate>();

function parsedTemplate(source: string): NameTemplate {
  let t = templates.get(source);
  if (!t) {
    t = NameTemplate.parse(source);
    if (templates.size >= 256) templates.clear();
    templates.set(source, t);
  }
  return t;
}
