/**
 * Secret sync domain operations (no HTTP here), the one entry point of the sys/sync routes: each
 * method hands over to the part that does the job. Destinations: destination-service.ts;
 * associations and KV events: association-service.ts; the cached association maps:
 * association-view.ts; GitHub Apps: github-app-service.ts; sys/sync/config: config-service.ts.
 * Rules of spec section 3 and reference sync-wire.md 1.3-1.9.
 */
import type { Clock, KvEvent, Logger } from '../framework/context.js';
import { AssociationService } from './association-service.js';
import { AssociationViews } from './association-view.js';
import { ConfigService } from './config-service.js';
import { DestinationService, type DestinationInput } from './destination-service.js';
import { GithubAppService } from './github-app-service.js';
import type { KvSource } from './kv-source.js';
import type { SyncStore } from './store.js';
import { parseLinkKey, type DestinationType, type LinkRecord, type SyncConfig } from './types.js';
import type { Syncer } from './worker.js';

/** Domain operations behind the sys/sync routes. */
export class SyncService {
  private readonly destinations: DestinationService;
  private readonly links: AssociationService;
  private readonly views: AssociationViews;
  private readonly apps: GithubAppService;
  private readonly settings: ConfigService;

  constructor(
    readonly store: SyncStore,
    readonly syncer: Syncer,
    kv: KvSource,
    clock: Clock,
    logger: Logger,
  ) {
    this.views = new AssociationViews(store, kv, (link) => syncer.activityOf(link));
    this.destinations = new DestinationService(store, syncer, clock);
    this.links = new AssociationService(store, syncer, this.views, kv, clock, logger);
    this.apps = new GithubAppService(store, syncer, clock);
    this.settings = new ConfigService(store, syncer);
    store.linkChanged = (dest, id) => this.views.linkChanged(dest, id);
    syncer.onActivity = (link) => {
      const { type, name, id } = parseLinkKey(link);
      this.views.linkChanged(`${type}/${name}`, id);
    };
  }

  // ---- destinations ----

  /** Names grouped by type (LIST sys/sync/destinations). */
  listDestinations(): Promise<Record<string, unknown> | null> {
    return this.destinations.list();
  }

  /** Names of one type (LIST sys/sync/destinations/:type). */
  listDestinationsOfType(type: DestinationType): Promise<Record<string, unknown> | null> {
    return this.destinations.listOfType(type);
  }

  /** A destination as read (sensitive values masked), or null. */
  readDestination(type: DestinationType, name: string): Promise<Record<string, unknown> | null> {
    return this.destinations.read(type, name);
  }

  /** Whether a destination exists (ACL existence check). */
  destinationExists(type: DestinationType, name: string): Promise<boolean> {
    return this.destinations.exists(type, name);
  }

  /** Create or update (merge) a destination; PATCH refuses a missing one. */
  writeDestination(
    type: DestinationType,
    name: string,
    input: DestinationInput,
    mode: 'post' | 'patch',
    typeId?: string,
  ): Promise<Record<string, unknown>> {
    return this.destinations.write(type, name, input, mode, typeId);
  }

  /** Delete a destination: refused while it has associations unless purge (unsync all, then delete) or force. */
  deleteDestination(
    type: DestinationType,
    name: string,
    opts: { purge: boolean; force: boolean },
  ): Promise<Record<string, unknown> | null> {
    return this.destinations.delete(type, name, opts);
  }

  // ---- associations ----

  /** All associations of a destination, with their latest status (`overlay`: a link just dropped, shown as it ended). */
  associations(type: DestinationType, name: string, overlay?: LinkRecord | null): Promise<Record<string, unknown>> {
    return this.views.associations(type, name, overlay);
  }

  /** The JSON (UTF-8 pieces, in order) of an answer `associations` (or set/remove) returned, when kept; else undefined. */
  jsonOf(answer: object): readonly Buffer[] | undefined {
    return this.views.jsonOf(answer);
  }

  /** Link a secret (or refresh an existing link, retrying a failed sync); answers with the destination's associations. */
  setAssociation(
    type: DestinationType,
    name: string,
    mountIn: string,
    secretIn: string,
    canRead: (path: string) => boolean,
  ): Promise<Record<string, unknown>> {
    return this.links.set(type, name, mountIn, secretIn, canRead);
  }

  /** Unlink a secret: unsync (delete externally), then drop the link; succeeds when already absent (spec 7.12). */
  removeAssociation(
    type: DestinationType,
    name: string,
    mountIn: string,
    secretIn: string,
  ): Promise<Record<string, unknown>> {
    return this.links.remove(type, name, mountIn, secretIn);
  }

  /** Every secret with at least one association (LIST sys/sync/associations). */
  listAssociations(): Promise<Record<string, unknown> | null> {
    return this.links.list();
  }

  /** Destinations one secret is linked to, with the status of each. */
  destinationsOf(mountIn: string, secretIn: string): Promise<Record<string, unknown> | null> {
    return this.links.destinationsOf(mountIn, secretIn);
  }

  /** React to a KV change: re-sync (write, patch, undelete) or unsync (delete, destroy of the latest, metadata delete). */
  onKvEvent(e: KvEvent): Promise<void> {
    return this.links.onKvEvent(e);
  }

  // ---- GitHub Apps (reference sync-wire.md 1.9) ----

  /** Register or update a GitHub App; `app_id` is fixed once set (replace the app instead). */
  writeGithubApp(name: string, input: { app_id?: number; private_key?: string }): Promise<Record<string, unknown>> {
    return this.apps.write(name, input);
  }

  /** A GitHub App as read (key masked), or null. */
  readGithubApp(name: string): Promise<Record<string, unknown> | null> {
    return this.apps.read(name);
  }

  /** Names of registered GitHub Apps. */
  listGithubApps(): Promise<Record<string, unknown> | null> {
    return this.apps.list();
  }

  /** Remove a GitHub App; refused while a destination uses it (GitHub itself is not touched). */
  deleteGithubApp(name: string): Promise<void> {
    return this.apps.delete(name);
  }

  // ---- config ----

  /** sys/sync/config. */
  config(): Promise<SyncConfig> {
    return this.settings.read();
  }

  /** Merge changes into sys/sync/config and apply them. */
  updateConfig(changes: Partial<SyncConfig>): Promise<SyncConfig> {
    return this.settings.update(changes);
  }

  /** Reset sys/sync/config to defaults. */
  resetConfig(): Promise<void> {
    return this.settings.reset();
  }
}
