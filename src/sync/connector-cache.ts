/**
 * The connector of each destination, built once and kept until the destination changes (its
 * revision moves), is deleted, or its GitHub App key is replaced. A connector holds sockets, OAuth
 * and installation tokens and the provider SDK client, so building it per operation would cost a
 * token request and a new connection each time.
 */
import type { Clock, Logger } from '../framework/context.js';
import type { Connector, ConnectorDeps } from './destinations/common.js';
import { DESTINATION_TYPES } from './destinations/index.js';
import { HttpClient } from './http-client.js';
import type { IdentityTokenSigner } from './identity-token.js';
import { NetworkGuard } from './network-guard.js';
import type { SyncStore } from './store.js';
import type { DestinationRecord } from './types.js';

/** Builds the connector of a destination (tests pass a fake). */
export type ConnectFn = (dest: DestinationRecord, deps: ConnectorDeps) => Connector;

/** Connectors by `type/name`, with the destination revision each was built for. */
export class ConnectorCache {
  private readonly connectors = new Map<string, { revision: number; connector: Connector }>();
  private readonly connect: ConnectFn;

  constructor(
    private readonly deps: {
      store: SyncStore;
      clock: Clock;
      logger: Logger;
      timeoutMs: () => number;
      connect?: ConnectFn;
      identityToken?: IdentityTokenSigner;
    },
  ) {
    this.connect = deps.connect ?? ((dest, d) => DESTINATION_TYPES[dest.type].connect(dest, d));
  }

  /** The connector of a destination (rebuilt when the destination changed); throws on a bad configuration. */
  of(dest: DestinationRecord): Connector {
    const key = `${dest.type}/${dest.name}`;
    const cached = this.connectors.get(key);
    if (cached && cached.revision === dest.revision) return cached.connector;
    cached?.connector.close();
    const guard = new NetworkGuard(dest.options);
    const timeoutMs = this.deps.timeoutMs();
    const connector = this.connect(dest, {
      guard,
      http: new HttpClient(guard, timeoutMs),
      timeoutMs,
      now: () => this.deps.clock.now(),
      logger: this.deps.logger,
      githubApp: (name) => this.deps.store.getApp(name),
      ...(this.deps.identityToken ? { identityToken: this.deps.identityToken } : {}),
    });
    this.connectors.set(key, { revision: dest.revision, connector });
    return connector;
  }

  /** Forget a destination's connector (after delete, or a new GitHub App key). */
  drop(type: string, name: string): void {
    const key = `${type}/${name}`;
    this.connectors.get(key)?.connector.close();
    this.connectors.delete(key);
  }

  /** Close every connector (shutting down). */
  closeAll(): void {
    for (const { connector } of this.connectors.values()) connector.close();
    this.connectors.clear();
  }
}
