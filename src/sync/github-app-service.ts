/**
 * GitHub Apps (sys/sync/github-apps, reference sync-wire.md 1.9): the app id and private key that
 * repohost destinations with app authentication use to get installation tokens. The key is never
 * shown; its fingerprint is.
 */
import type { Clock } from '../framework/context.js';
import { invalid } from '../framework/errors.js';
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { MASK, checkStoreName } from './destination-service.js';
import type { GithubAppRecord, SyncStore } from './store.js';
import type { Syncer } from './worker.js';

/** Registered GitHub Apps. */
export class GithubAppService {
  constructor(
    private readonly store: SyncStore,
    private readonly syncer: Syncer,
    private readonly clock: Clock,
  ) {}

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }

  /** Register or update a GitHub App; `app_id` is fixed once set (replace the app instead). */
  async write(name: string, input: { app_id?: number; private_key?: string }): Promise<Record<string, unknown>> {
    checkStoreName(name);
    const existing = await this.store.getApp(name);
    if (input.app_id !== undefined && (!Number.isSafeInteger(input.app_id) || input.app_id <= 0))
      throw invalid('app_id', 'must be the numeric id of the GitHub App');
    if (existing && input.app_id !== undefined && input.app_id !== existing.app_id)
      throw invalid('app_id', 'cannot be changed; register a new app instead');
    const appId = input.app_id ?? existing?.app_id;
    if (appId === undefined) throw invalid('app_id', 'is required');
    const pem = input.private_key ?? existing?.private_key;
    if (!pem) throw invalid('private_key', 'is required');
    let fingerprint: string;
    try {
      const key = createPrivateKey(pem);
      if (key.asymmetricKeyType !== 'rsa') throw new Error('not RSA');
      fingerprint = createHash('sha256')
        .update(createPublicKey(key).export({ type: 'spki', format: 'der' }))
        .digest('base64');
    } catch {
      // Never echo the key: it is the app's credential.
      throw invalid('private_key', "must be the app's RSA private key in PEM (as GitHub generates it)");
    }
    const now = this.now();
    const rec = {
      name,
      app_id: appId,
      private_key: pem,
      fingerprint,
      created_at: existing?.created_at ?? now,
      updated_at: now,
    };
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
  async read(name: string): Promise<Record<string, unknown> | null> {
    const a = await this.store.getApp(name);
    return a ? githubAppView(a) : null;
  }

  /** Names of registered GitHub Apps. */
  async list(): Promise<Record<string, unknown> | null> {
    const keys = await this.store.appNames();
    return keys.length ? { keys } : null;
  }

  /** Remove a GitHub App; refused while a destination uses it (GitHub itself is not touched). */
  async delete(name: string): Promise<void> {
    for (const d of await this.store.destNames('repohost')) {
      const dest = await this.store.getDest('repohost', d);
      if (dest?.connection.app_name === name)
        throw invalid(
          `GitHub App ${name} is used by destination repohost/${d}; change or delete that destination first`,
        );
    }
    await this.store.deleteApp(name);
  }
}

/** The read view of a GitHub App: the key masked, its fingerprint shown (reference 1.9). */
function githubAppView(a: GithubAppRecord): Record<string, unknown> {
  return { name: a.name, app_id: a.app_id, private_key: MASK, fingerprint: a.fingerprint };
}
