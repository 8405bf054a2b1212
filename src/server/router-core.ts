/** What the router needs from the core (the core implements it; src/server/core/core.ts). */
import type { IssuedLogin, Logger, TokenInfo } from '../framework/context.js';
import type { AclRequest, AclResult } from '../auth/acl.js';
import type { WrapInfo } from '../auth/wrapping.js';
import type { ClusterRouting } from './forward.js';
import type { AuditHook, MountedEngine } from './flow.js';
import type { QuotaManager } from '../quotas/quota-manager.js';
import type { CorsPolicy } from './cors.js';
import type { InFlightRequests } from './in-flight.js';
import type { Telemetry } from '../telemetry/telemetry.js';

/** Capability check for a token (ACL). */
export interface Authorizer {
  allowed(token: TokenInfo, capability: string, path: string): boolean;
  /** Vault's AllowOperation: capability, parameter constraints and wrapping TTL bounds (falls back to `allowed`). */
  check?(token: TokenInfo, req: AclRequest): AclResult;
}

/** Response wrapping as the router needs it (src/auth/wrapping.ts implements it). */
export interface Wrapper {
  /** Store `responseJson` in a new single-use token's cubbyhole for `ttl` seconds; the `wrap_info` to send. */
  wrap(responseJson: string, ttl: number, creationPath: string, wrappedAccessor?: string): Promise<WrapInfo>;
}

/** What the router needs from the core. */
export interface RouterCore {
  isSealed(): boolean;
  resolve(path: string): MountedEngine | null;
  /** `peek`: look without spending one of a limited-use token's uses (unauthenticated routes). */
  lookupToken(id: string, opts?: { peek?: boolean }): Promise<TokenInfo | null>;
  /** A valid token's view when it needs no storage read or write (no use limit, cached), else undefined. */
  cachedToken?(id: string): TokenInfo | undefined;
  authorizer: Authorizer;
  /** Response wrapping; without it X-Vault-Wrap-TTL is refused. */
  wrapping?: Wrapper;
  audit?: AuditHook;
  logger: Logger;
  maxRequestSize: number;
  /** Called after a request whose token was on its last use (num_uses), to revoke it. */
  requestDone?(token: TokenInfo): Promise<void>;
  /** Set on a node of a cluster (HA storage): standbys forward writes to the active. */
  cluster?: ClusterRouting;
  /** Issue 28: rate-limit quotas (every node enforces them), CORS, requests in progress. */
  quotas?: QuotaManager;
  cors?: CorsPolicy;
  inFlight?: InFlightRequests;
  /** Metrics (a `telemetry` stanza in the config); absent, nothing is measured. */
  telemetry?: Telemetry;
  /** Login MFA: completes a login in one step when it carries X-Vault-MFA. */
  loginMfa?: { validateHeader(requestId: string, header: string | string[]): Promise<IssuedLogin> };
}
