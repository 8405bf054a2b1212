/**
 * Who may do what: token lookup for the router (the hot path's cached answer, limited-use tokens),
 * the compiled ACL of a token's policies (cached by policy set and identity), capability answers,
 * when token expiry runs, and the sweeper that destroys the cubbyholes of expired tokens.
 */
import { ACL, type AclResult, type Policy } from '../../auth/acl.js';
import type { IdentityStore } from '../../auth/identity.js';
import { effectivePolicies, hasNoPolicies } from '../../auth/identity/effective-policies.js';
import type { PolicyStore } from '../../auth/policies.js';
import { tokenInfo, type TokenStore } from '../../auth/tokens.js';
import { destroyCubbyhole } from '../../engines/cubbyhole/index.js';
import type { SysAccess } from '../../engines/sys/sys-parts.js';
import type { Clock, Logger, TokenInfo } from '../../framework/context.js';
import type { Storage } from '../../storage/backend.js';
import type { RoleView, SealView } from '../contracts.js';
import type { Authorizer } from '../router.js';

/** How often tokens' cubbyholes are checked for expired owners (an unused wrapping token is gone at its TTL). */
const CUBBYHOLE_SWEEP_MS = 30_000;

const ROOT_RESULT: AclResult = { allowed: true, rootPrivs: true };
const DENIED_RESULT: AclResult = { allowed: false, rootPrivs: false };

/** Compiled ACLs kept at most (policy sets times entities with templated policies). */
const ACL_CACHE_MAX = 10_000;

const identityKeys = new WeakMap<object, string>();

/** A stable key of an identity (templated ACLs are cached per entity and its current metadata). */
function identityKey(id: NonNullable<TokenInfo['identity']>): string {
  let k = identityKeys.get(id);
  if (k === undefined) identityKeys.set(id, (k = JSON.stringify(id)));
  return k;
}

/** What access control is built from. */
export interface AccessDeps {
  tokens: TokenStore;
  policies: PolicyStore;
  identity: IdentityStore;
  /** Per-token cubbyholes (behind the barrier). */
  cubbyholes: Storage;
  clock: Clock;
  logger: Logger;
  seal: SealView;
  role: RoleView;
}

/** Tokens, their ACLs and their cubbyholes' sweeper. */
export class Access implements SysAccess {
  private readonly tokens: TokenStore;
  private readonly policies: PolicyStore;
  private readonly identity: IdentityStore;
  private readonly cubbyholes: Storage;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private aclCache = new Map<string, ACL>();
  /** aclCache key of a token's policy list (the entry's array, shared by its views): no join per request. */
  private readonly aclKeys = new WeakMap<readonly string[], string>();
  private sweeper: NodeJS.Timeout | null = null;
  /** The router's capability checks, answered from compiled ACLs only (no await on the hot path). */
  readonly authorizer: Authorizer;

  constructor(private readonly deps: AccessDeps) {
    this.tokens = deps.tokens;
    this.policies = deps.policies;
    this.identity = deps.identity;
    this.cubbyholes = deps.cubbyholes;
    this.clock = deps.clock;
    this.logger = deps.logger;
    this.authorizer = {
      allowed: (token, cap, path) => {
        if (token.root) return true;
        const acl = this.aclCache.get(this.aclKeyFor(token));
        return acl ? acl.allowed(cap, path) : false;
      },
      check: (token, req) => {
        if (token.root) return ROOT_RESULT;
        const acl = this.aclCache.get(this.aclKeyFor(token));
        return acl ? acl.check(req) : DENIED_RESULT;
      },
    };
  }

  private get unsealed(): boolean {
    return !this.deps.seal.isSealed();
  }

  private get standbyMode(): boolean {
    return this.deps.role.isStandby();
  }

  private aclKeyOf(policies: readonly string[]): string {
    let key = this.aclKeys.get(policies);
    if (key === undefined) this.aclKeys.set(policies, (key = policies.join(',')));
    return key;
  }

  /**
   * The ACL cache key of a token: its policy list, plus its identity when it has one (templated
   * policies, the default policy among them, resolve per entity).
   */
  private aclKeyFor(token: TokenInfo): string {
    const base = this.aclKeyOf(token.policies);
    return token.identity ? base + '\0' + identityKey(token.identity) : base;
  }

  /** The policies of a token, loaded (unknown names are skipped, as Vault does). */
  private async policiesOf(names: readonly string[]): Promise<Policy[]> {
    const ps: Policy[] = [];
    for (const n of names) {
      const p = await this.policies.get(n);
      if (p) ps.push(p);
    }
    return ps;
  }

  /** The compiled ACL of a token (cached by policy list and identity). */
  async aclOf(token: TokenInfo): Promise<ACL> {
    const key = this.aclKeyFor(token);
    let acl = this.aclCache.get(key);
    if (!acl) {
      // Vault: a token's effective policies are its own plus its entity's and its groups' (identity policies).
      acl = new ACL(await this.policiesOf(effectivePolicies(token)), token.identity, this.clock.now());
      // Per-entity ACLs (templated policies) could grow without end: start over when full.
      if (this.aclCache.size >= ACL_CACHE_MAX) this.aclCache.clear();
      this.aclCache.set(key, acl);
    }
    return acl;
  }

  /** The hot path's token lookup: answers only when no storage read or write is needed, else undefined. */
  cachedToken(id: string): TokenInfo | undefined {
    if (!this.unsealed) return undefined;
    const entry = this.tokens.cachedEntry(id);
    if (!entry || entry.num_uses > 0) return undefined;
    const info = tokenInfo(id, entry);
    if (entry.entity_id) {
      const identity = this.identity.cachedTokenIdentity(entry.entity_id);
      if (!identity || identity.disabled) return undefined;
      info.identity = identity;
    }
    if (!info.root && !this.aclCache.has(this.aclKeyFor(info))) return undefined;
    return info;
  }

  /** Token lookup for the router; compiles and caches the ACL of its policy set. */
  async lookupToken(id: string, opts: { peek?: boolean } = {}): Promise<TokenInfo | null> {
    if (!this.unsealed) return null;
    let entry;
    try {
      entry = await this.tokens.lookup(id);
    } catch (e) {
      // A standby cannot revoke an expired token (the active will): it is simply not valid here.
      if ((e as Error)?.name === 'NotActiveError') return null;
      throw e;
    }
    if (!entry) return null;
    const info = tokenInfo(id, entry);
    // Login-issued tokens carry their entity: templated policies resolve against it.
    if (entry.entity_id) info.identity = (await this.identity.tokenIdentity(entry.entity_id)) ?? undefined;
    // A disabled entity's tokens are refused, not revoked (Vault).
    if (info.identity?.disabled) return null;
    if (!info.root) await this.aclOf(info);
    // `peek`: an unauthenticated route looked at the token (audit, wrapping lookup) without using it,
    // as Vault's login path does not count a use.
    if (!opts.peek && entry.num_uses > 0 && this.standbyMode) {
      // Uses are counted by the active (one count for the cluster): the request goes there.
      info.mustForward = true;
    } else if (!opts.peek && entry.num_uses > 0) {
      // Spent under the token's lock on a fresh read: a request whose use could not be spent
      // (another request took the last one) is refused, however requests interleave.
      const spent = await this.tokens.spendUse(entry);
      if (spent === 'gone') return null;
      if (spent === 'last') info.lastUse = true;
    }
    return info;
  }

  /** After a request that spent a token's last use: revoke it (RouterCore hook). */
  async requestDone(token: TokenInfo): Promise<void> {
    if (!token.lastUse || !this.unsealed) return;
    const entry = await this.tokens.lookup(token.id, { includeSpent: true });
    if (entry) await this.tokens.revokeEntry(entry);
  }

  /** Drop compiled ACLs (after a policy change). */
  invalidateAcls(): void {
    this.aclCache.clear();
  }

  /** Capabilities of a token on a path (sys/capabilities-self). */
  async capabilities(token: TokenInfo, path: string): Promise<string[]> {
    if (token.root) return ['root'];
    if (hasNoPolicies(token)) return ['deny'];
    return (await this.aclOf(token)).capabilities(path);
  }

  /** The resultant ACL of a token (sys/internal/ui/resultant-acl). */
  async resultantAcl(token: TokenInfo): Promise<Record<string, unknown>> {
    if (token.root) return { root: true };
    return { ...(await this.aclOf(token)).resultant(), chroot_namespace: '' };
  }

  /** Run token expiry here (in the background: lookups check expiry and parents themselves meanwhile). */
  startTokenExpiry(): void {
    this.tokens
      .startExpiry()
      .catch((e: unknown) => this.logger.error('token expiry scan failed', { error: (e as Error)?.message }));
  }

  /** Stop revoking expired tokens on a timer (this node became a standby: the active does it). */
  stopTokenExpiry(): void {
    this.tokens.stopExpiry();
  }

  /** Destroy cubbyholes whose token has expired or is gone (tokens are otherwise only expired on lookup). */
  async sweepCubbyholes(): Promise<void> {
    // Deleting is writing: on a cluster only the active node sweeps.
    if (!this.unsealed || this.standbyMode) return;
    for (const name of await this.cubbyholes.list('')) {
      if (!name.endsWith('/')) continue;
      const hash = name.slice(0, -1);
      if (!(await this.tokens.liveHash(hash))) await destroyCubbyhole(this.cubbyholes, name);
    }
  }

  /** Sweep cubbyholes every CUBBYHOLE_SWEEP_MS (from unseal). */
  startSweeper(): void {
    this.sweeper = setInterval(() => {
      this.sweepCubbyholes().catch((e: unknown) =>
        this.logger.error('cubbyhole sweep failed', { error: (e as Error)?.message }),
      );
    }, CUBBYHOLE_SWEEP_MS).unref();
  }

  /** Stop sweeping (at seal). */
  stopSweeper(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }
}
