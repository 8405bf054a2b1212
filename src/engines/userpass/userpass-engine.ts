/**
 * userpass domain (hashicorp/vault builtin/credential/userpass: path_users.go, path_user_password.go,
 * path_user_policies.go, path_login.go): users with a bcrypt password hash and the `token_*` fields.
 * An unknown user is checked against a dummy hash of the same cost, so the answer takes the time a
 * wrong password takes and does not tell which usernames exist. No HTTP in here.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { EngineEnv, IssuedLogin } from '../../framework/context.js';
import { denied, invalid, notFound } from '../../framework/errors.js';
import { KeyedLock } from '../../framework/keyed-lock.js';
import { getJSON, putJSON } from '../../storage/backend.js';
import { BCRYPT_COST, hashPassword, isBcryptHash, verifyPassword } from '../../auth/password-hash.js';
import { addressAllowed } from '../auth-common/cidr.js';
import { defaultTokenParams, loginAuthOf, parseTokenParams, type TokenParams } from '../auth-common/token-params.js';
import { UserLockout } from '../auth-common/user-lockout.js';

/** A stored user. */
export interface UserEntry extends TokenParams {
  name: string;
  password_hash: string;
  /** Deprecated fields, echoed on read only when they were written under their old names. */
  legacy_policies?: string[];
  legacy_bound_cidrs?: string[];
  legacy_ttl?: number;
  legacy_max_ttl?: number;
}

/** What a user write may carry (coerced by the route). */
export interface UserInput {
  password?: string;
  password_hash?: string;
  [token: string]: unknown;
}

/** Vault's answer to any failed login (400, logical.ErrorResponse). */
export const BAD_LOGIN = 'invalid username or password';

/** Usernames are case-insensitive and stored lower-cased (path_users.go). */
export function userName(raw: string): string {
  const name = raw.trim().toLowerCase();
  if (name === '') throw invalid('username', 'must not be empty');
  if (Buffer.byteLength(name) > 4096) throw invalid('username', 'must be at most 4096 bytes');
  return name;
}

/** Storage key of a user: a hash, so no storage key names a person. */
function userKey(name: string): string {
  return `user/${createHash('sha256').update(name).digest('hex')}`;
}

/** One userpass mount. */
export class UserpassEngine {
  private readonly locks = new KeyedLock();
  private readonly lockout: UserLockout;
  /** A hash of a random password at the real cost: unknown users are compared against it. */
  private dummy: Promise<string> | null = null;

  constructor(readonly env: EngineEnv) {
    this.lockout = new UserLockout(() => env.mount, env.clock);
  }

  /** Nothing to stop (EngineLifecycle). */
  async close(): Promise<void> {}

  private dummyHash(): Promise<string> {
    this.dummy ??= hashPassword(randomBytes(18).toString('base64'), BCRYPT_COST);
    return this.dummy;
  }

  /** A user or null. */
  user(name: string): Promise<UserEntry | null> {
    return getJSON<UserEntry>(this.env.storage, userKey(name));
  }

  /** Usernames, sorted. */
  async list(): Promise<string[]> {
    const out: string[] = [];
    for (const n of await this.env.storage.list('user/')) {
      const u = await getJSON<UserEntry>(this.env.storage, `user/${n}`);
      if (u) out.push(u.name);
    }
    return out.sort();
  }

  /**
   * Create or update a user (pathUserWrite): a new user needs `password` or `password_hash`; an
   * update may leave the password alone. Returns warnings of the token fields.
   */
  async write(name: string, input: UserInput, opts: { mustExist?: boolean } = {}): Promise<string[]> {
    // Hash outside the lock: bcrypt is the slow part, and the lock only guards read-modify-write.
    const newHash = await this.hashOf(input);
    return this.locks.run(name, async () => {
      const existing = await this.user(name);
      if (!existing && opts.mustExist) throw notFound(`username does not exist: ${name}`);
      if (!existing && newHash === undefined) throw invalid('missing password');
      const user: UserEntry = existing ?? { name, password_hash: '', ...defaultTokenParams() };
      const warnings = parseTokenParams(user, input as Record<string, unknown>, this.env.mount);
      if (input.policies !== undefined && input.token_policies === undefined)
        user.legacy_policies = user.token_policies;
      if (input.bound_cidrs !== undefined && input.token_bound_cidrs === undefined)
        user.legacy_bound_cidrs = user.token_bound_cidrs;
      if (input.ttl !== undefined && input.token_ttl === undefined) user.legacy_ttl = user.token_ttl;
      if (input.max_ttl !== undefined && input.token_max_ttl === undefined) user.legacy_max_ttl = user.token_max_ttl;
      if (newHash !== undefined) user.password_hash = newHash;
      await putJSON(this.env.storage, userKey(name), user);
      return warnings;
    });
  }

  private async hashOf(input: UserInput): Promise<string | undefined> {
    if (input.password !== undefined && input.password_hash !== undefined)
      throw invalid('only one of "password" or "password_hash" can be set');
    if (input.password_hash !== undefined) {
      if (!isBcryptHash(input.password_hash))
        throw invalid('password_hash', 'must be a bcrypt hash ($2a$, $2b$ or $2y$)');
      return input.password_hash;
    }
    if (input.password !== undefined) return hashPassword(input.password);
    return undefined;
  }

  /** Set a user's password (users/:name/password). */
  async setPassword(name: string, password: string | undefined, passwordHash?: string): Promise<void> {
    if ((password === undefined || password === '') && passwordHash === undefined) throw invalid('missing password');
    await this.write(name, passwordHash !== undefined ? { password_hash: passwordHash } : { password }, {
      mustExist: true,
    });
  }

  /** Delete a user (absent: nothing). */
  async delete(name: string): Promise<void> {
    await this.locks.run(name, () => this.env.storage.delete(userKey(name)));
  }

  /**
   * Log in (path_login.go): the password is compared with bcrypt whether or not the user exists;
   * every refusal is the same 400. A locked-out user is refused with 403 before any comparison
   * (Vault's user lockout), and the login must come from the user's token_bound_cidrs when set.
   */
  async login(rawName: string, password: string | undefined, remoteAddress: string): Promise<IssuedLogin> {
    if (password === undefined || password === '') throw invalid('missing password');
    const name = userName(rawName);
    if (this.lockout.locked(name)) throw denied();
    const user = await this.user(name);
    const ok = await verifyPassword(password, user ? user.password_hash : await this.dummyHash());
    if (!user || !ok) {
      if (user) this.lockout.fail(name);
      throw invalid(BAD_LOGIN);
    }
    if (user.token_bound_cidrs.length && !addressAllowed(remoteAddress, user.token_bound_cidrs)) {
      throw denied();
    }
    this.lockout.succeed(name);
    const issue = this.env.core.issueLoginToken;
    if (!issue) throw new Error('token store unavailable');
    const metadata = { username: name };
    return issue.call(
      this.env.core,
      this.env.mount,
      loginAuthOf(user, { path: `${this.env.mount.path}login/${name}`, displayName: name, metadata, alias: { name } }),
    );
  }
}
