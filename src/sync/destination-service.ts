/**
 * Destinations (sys/sync/destinations): list, read with sensitive values masked, create and
 * update with each type's rules (reference sync-wire.md 1.4-1.6), and delete, refused while
 * associations remain unless purged or forced. A change that affects what is at the provider
 * syncs every link again; any other change retries the failed ones.
 */
import type { Clock } from '../framework/context.js';
import { invalid, notFound } from '../framework/errors.js';
import { checkTagLimits } from './destinations/common.js';
import { DESTINATION_TYPES } from './destinations/index.js';
import { gcpLabels } from './destinations/provider-c-sm.js';
import { markedPending } from './link-records.js';
import { nameProblem, normalizeName } from './name-rules.js';
import { NetworkGuard } from './network-guard.js';
import type { SyncStore } from './store.js';
import { NameTemplate, TemplateError } from './templates.js';
import { isAlias, shownType } from './type-aliases.js';
import {
  DESTINATION_TYPE_IDS,
  ERROR_STATUSES,
  linkKey,
  type DestinationOptions,
  type DestinationRecord,
  type DestinationType,
  type Granularity,
} from './types.js';
import type { Syncer } from './worker.js';

/** The literal Vault shows for a stored sensitive value. */
export const MASK = '*****';

/** Names of destinations and GitHub Apps. */
const STORE_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** Throws 400 naming `name` unless it is a valid destination or GitHub App name. */
export function checkStoreName(name: string): void {
  if (!STORE_NAME.test(name) || name === '.' || name === '..')
    throw invalid('name', 'must be 1-128 characters of letters, digits, "_", "." and "-"');
}

/** Vault's refusal text for deleting a destination that still has associations (reference 1.4). */
export const STILL_MANAGING = 'store cannot be deleted because it is still managing secrets';

/** What a create/update request supplied (undefined = omitted). */
export type DestinationInput = Record<string, unknown>;

/** Destination records and the reactions of their links to a change. */
export class DestinationService {
  constructor(
    private readonly store: SyncStore,
    private readonly syncer: Syncer,
    private readonly clock: Clock,
  ) {}

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }

  /** Names grouped by type (LIST sys/sync/destinations). */
  async list(): Promise<Record<string, unknown> | null> {
    const keyInfo: Record<string, string[]> = {};
    let total = 0;
    for (const type of DESTINATION_TYPE_IDS) {
      const names = await this.store.destNames(type);
      // Grouped under the id each was created under (keyhold's, or Vault's alias; type-aliases.ts).
      for (const name of names) {
        const d = await this.store.getDest(type, name);
        (keyInfo[`${d ? shownType(d) : type}/`] ??= []).push(name);
      }
      total += names.length;
    }
    if (total === 0) return null;
    return { keys: Object.keys(keyInfo), key_info: keyInfo, total_destinations: total };
  }

  /** Names of one type (LIST sys/sync/destinations/:type). */
  async listOfType(type: DestinationType): Promise<Record<string, unknown> | null> {
    const names = await this.store.destNames(type);
    return names.length ? { keys: names, total_destinations: names.length } : null;
  }

  /** A destination as read (sensitive values masked), or null. */
  async read(type: DestinationType, name: string): Promise<Record<string, unknown> | null> {
    const d = await this.store.getDest(type, name);
    return d ? destinationView(d) : null;
  }

  /** Whether a destination exists (ACL existence check). */
  async exists(type: DestinationType, name: string): Promise<boolean> {
    return (await this.store.getDest(type, name)) !== null;
  }

  /** Create or update (merge) a destination; PATCH refuses a missing one. */
  async write(
    type: DestinationType,
    name: string,
    input: DestinationInput,
    mode: 'post' | 'patch',
    typeId?: string,
  ): Promise<Record<string, unknown>> {
    checkStoreName(name);
    const def = DESTINATION_TYPES[type];
    const existing = await this.store.getDest(type, name);
    if (!existing && mode === 'patch') throw notFound(`destination ${type}/${name} does not exist`);
    if (existing?.purge_initiated_at) throw invalid('name', 'destination is being deleted (purge in progress)');

    const conn: Record<string, unknown> = existing ? { ...existing.connection } : { ...def.defaults };
    for (const field of Object.keys(def.fields)) {
      const v = input[field];
      if (v === undefined) continue;
      // A field stored before it existed (older record) counts as its default.
      if (
        existing &&
        def.immutable.includes(field) &&
        !sameValue(v, existing.connection[field] ?? def.defaults[field])
      ) {
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
      throw invalid(
        'app_name',
        `no GitHub App "${String(conn.app_name).slice(0, 64)}" is registered under sys/sync/github-apps`,
      );
    }
    const resyncAll = existing ? (def.onUpdate?.(existing.connection, conn) ?? false) : false;

    const opts: DestinationOptions = existing
      ? { ...existing.options }
      : {
          granularity: def.defaultGranularity,
          custom_tags: {},
          allowed_ipv4_addresses: [],
          allowed_ipv6_addresses: [],
          allowed_ports: [],
          disable_strict_networking: false,
        };
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
    if (input.allowed_ipv4_addresses !== undefined)
      opts.allowed_ipv4_addresses = input.allowed_ipv4_addresses as string[];
    if (input.allowed_ipv6_addresses !== undefined)
      opts.allowed_ipv6_addresses = input.allowed_ipv6_addresses as string[];
    if (input.allowed_ports !== undefined) opts.allowed_ports = input.allowed_ports as number[];
    if (input.disable_strict_networking !== undefined)
      opts.disable_strict_networking = Boolean(input.disable_strict_networking);
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
    // The id it was created under (one of Vault's aliases) is kept for the lists that name none.
    const createdAs = existing ? existing.type_id : typeId !== undefined && isAlias(typeId) ? typeId : undefined;
    if (createdAs) record.type_id = createdAs;
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
      if ([l.sync_status, ...Object.values(l.entries).map((e) => e.sync_status)].some((s) => ERROR_STATUSES.has(s)))
        await this.syncer.enqueue(key);
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
        await this.store.putLink(markedPending(cur, this.now()));
      });
      if (!this.syncer.hasRoom(key)) continue; // left PENDING: the reconciliation scan queues it
      await this.syncer.enqueue(key, { now: true });
    }
  }

  /** Delete a destination: refused while it has associations unless purge (unsync all, then delete) or force. */
  async delete(
    type: DestinationType,
    name: string,
    opts: { purge: boolean; force: boolean },
  ): Promise<Record<string, unknown> | null> {
    const d = await this.store.getDest(type, name);
    if (!d) return null;
    const ids = await this.store.linkIds(type, name);
    if (ids.length === 0 || opts.force) {
      // force_delete: external secrets are left behind for manual clean-up (reference 1.4).
      for (const id of ids) {
        const key = linkKey(type, name, id);
        await this.syncer.locks.run(key, async () => {
          await this.store.deleteLink(type, name, id);
          this.syncer.index.remove(key);
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
  const sample = normalizeName(
    type,
    t.render({
      DestinationType: type,
      DestinationName: 'dest',
      NamespacePath: '',
      NamespaceBaseName: '',
      NamespaceID: 'root',
      MountPath: 'kv',
      MountBaseName: 'kv',
      MountAccessor: 'kv_1234abcd',
      SecretPath: 'app/config',
      SecretBaseName: 'config',
      SecretKey: 'password',
    }),
  );
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
