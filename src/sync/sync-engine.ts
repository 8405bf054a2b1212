/** The live state of secret sync on an unsealed node: store, worker and service, subscribed to KV events. */
import type { EngineEnv } from '../framework/context.js';
import { invalid } from '../framework/errors.js';
import { getJSON, putJSON } from '../storage/backend.js';
import { NOT_ACTIVATED, activationRequired } from './activation.js';
import { identityTokenSigner, type OidcIssuerLike } from './identity-token.js';
import { kvSourceOf } from './kv-source.js';
import { SyncService } from './service.js';
import { SyncStore } from './store.js';
import { tuningFromEnv } from './tuning.js';
import { Syncer } from './worker.js';

/** Live state of secret sync: store, worker, service; subscribed to KV events. */
export class SyncEngine {
  readonly service: SyncService;
  readonly syncer: Syncer;
  private readonly unsubscribe: () => void;
  private startTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(readonly env: EngineEnv) {
    const store = new SyncStore(env.storage);
    const kv = kvSourceOf(env);
    // Federation signs with keyhold's OIDC issuer, reached through the identity mount's instance.
    const identityToken = identityTokenSigner(
      () => env.core.engineOf<{ oidc?: OidcIssuerLike }>('identity/')?.oidc ?? null,
      () => env.clock.now(),
    );
    this.syncer = new Syncer({
      store,
      kv,
      clock: env.clock,
      logger: env.logger,
      tuning: tuningFromEnv(process.env),
      identityToken,
    });
    this.service = new SyncService(store, this.syncer, kv, env.clock, env.logger);
    this.unsubscribe = env.events.on('kv', (e) => {
      this.service.onKvEvent(e).catch((err) =>
        env.logger.error('sync: handling a KV event failed', {
          error: (err as Error)?.name,
          message: (err as Error)?.message,
        }),
      );
    });
    // The worker writes (queue, status): on a cluster only the active node runs it.
    if (!env.standby) this.startWhenMounted(0);
  }

  /**
   * The worker starts once the mount table is live (our own mount resolves), so queued operations
   * and the first reconciliation see the KV mounts loaded after this module.
   */
  private startWhenMounted(attempt: number): void {
    this.startTimer = setTimeout(
      () => {
        this.startTimer = null;
        if (this.closed) return;
        if (this.env.core.engineOf<SyncEngine>(this.env.mount.path) !== this && attempt < 6000) {
          this.startWhenMounted(attempt + 1);
          return;
        }
        this.syncer
          .start()
          .catch((e) => this.env.logger.error('sync: worker failed to start', { error: (e as Error)?.message }));
      },
      attempt === 0 ? 0 : 20,
    );
    this.startTimer.unref?.();
  }

  private readonly requireActivation = activationRequired(process.env);
  private activatedCache: boolean | null = null;

  /** Whether secret sync counts as activated (always, unless the daemon requires activation). */
  async activated(): Promise<boolean> {
    if (!this.requireActivation) return true;
    this.activatedCache ??=
      (await getJSON<{ activated?: boolean }>(this.env.storage, 'activation'))?.activated === true;
    return this.activatedCache;
  }

  /** Activate secret sync (idempotent; stored, so it survives restarts). */
  async activate(): Promise<void> {
    await putJSON(this.env.storage, 'activation', {
      activated: true,
      at: new Date(this.env.clock.now()).toISOString(),
    });
    this.activatedCache = true;
  }

  /** Throws Vault's 400 while the feature is not activated. */
  async requireActivated(): Promise<void> {
    if (!(await this.activated())) throw invalid(NOT_ACTIVATED);
  }

  /** Stop the worker (seal, shutdown); queued operations stay in storage for the next start. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.startTimer) clearTimeout(this.startTimer);
    this.unsubscribe();
    await this.syncer.close();
  }
}
