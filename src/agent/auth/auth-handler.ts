/**
 * Auto-auth: log in, write the token to the sinks, keep it alive, log in again when it cannot be.
 *
 * - Renewal happens at Vault's point of the token's life: two thirds of its TTL, with 10% jitter
 *   (Vault's lifetime watcher). A renewal that no longer extends the token (max TTL reached) or a
 *   token that is not renewable leads to a new login when about 10% of its TTL is left.
 * - A failed renewal (revoked token, server gone) leads to a new login; failed logins are retried
 *   with exponential backoff from `min_backoff` (1s) to `max_backoff` (5m), with jitter.
 * - Other parts of the agent report a "permission denied" with the token (`suspect()`): the token
 *   is looked up and, if it is no longer valid, the agent logs in again at once.
 * - `exit_after_auth`: the first successful login written to the sinks ends the agent.
 */
import type { MethodConfig } from '../config.js';
import type { AgentLog } from '../log.js';
import { UpstreamError, type Upstream } from '../upstream.js';
import type { AuthMethod } from './methods.js';
import type { FileSink } from './sink.js';
import { sameToken } from '../same-token.js';

/** Who wants to know about a new token (templates, exec, the proxy). */
export type TokenListener = (token: string) => void;

const WHO = 'agent.auth.handler';

export class AuthHandler {
  private token: string | undefined;
  private readonly listeners = new Set<TokenListener>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private backoff: number;
  private loggingIn: Promise<void> | undefined;
  private first: { resolve: () => void; reject: (e: Error) => void; promise: Promise<void> };
  /** Logins so far (tests and logs). */
  logins = 0;

  constructor(
    private readonly up: Upstream,
    private readonly method: AuthMethod,
    private readonly cfg: MethodConfig,
    private readonly sinks: FileSink[],
    private readonly log: AgentLog,
    private readonly onFatal: (e: Error) => void,
  ) {
    this.backoff = cfg.minBackoff;
    let resolve!: () => void;
    let reject!: (e: Error) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    promise.catch(() => {});
    this.first = { resolve, reject, promise };
  }

  /** The current token (undefined before the first login). */
  current(): string | undefined {
    return this.token;
  }

  /** Resolves once a first token is there. */
  ready(): Promise<void> {
    return this.first.promise;
  }

  onToken(l: TokenListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  start(): void {
    void this.login();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** Someone got a permission error with the token: check it and log in again if it is no longer valid. */
  suspect(): void {
    if (this.stopped || this.loggingIn || !this.token) return;
    const token = this.token;
    void this.up.json('GET', 'auth/token/lookup-self', { token }).then(
      () => {},
      (e) => {
        if (e instanceof UpstreamError && (e.status === 403 || e.status === 401) && sameToken(this.token, token)) {
          this.log.warn(WHO, 'the token is no longer valid; logging in again');
          this.schedule(0, () => this.login());
        }
      },
    );
  }

  private schedule(seconds: number, fn: () => Promise<void> | void): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void fn(), Math.max(0, seconds * 1000));
  }

  private login(): Promise<void> {
    if (this.loggingIn) return this.loggingIn;
    this.loggingIn = this.loginOnce().finally(() => {
      this.loggingIn = undefined;
    });
    return this.loggingIn;
  }

  private async loginOnce(): Promise<void> {
    if (this.stopped) return;
    let ttl = 0;
    let renewable = false;
    let token: string;
    try {
      const req = await this.method.prepare(this.up);
      if (req.kind === 'token') {
        token = req.token;
        const look = await this.up.json('GET', 'auth/token/lookup-self', { token });
        ttl = Number(look.body?.data?.ttl ?? 0);
        renewable = Boolean(look.body?.data?.renewable);
      } else {
        const r = await (req.upstream ?? this.up).json('POST', req.path, { body: req.body, wrapTtl: this.cfg.wrapTtl });
        if (this.cfg.wrapTtl) {
          if (!r.body?.wrap_info) throw new Error('the login was not wrapped');
          for (const s of this.sinks) s.writeWrapped(r.body.wrap_info);
          this.logins++;
          this.log.info(WHO, `login wrapped (method ${this.method.type}); the sinks hold the wrapping token`);
          this.first.resolve();
          // The agent cannot use a wrapped token; log in again when the wrapping token expires.
          this.schedule(this.cfg.wrapTtl, () => this.login());
          return;
        }
        token = String(r.body?.auth?.client_token ?? '');
        if (!token) throw new Error('the login answer has no auth.client_token');
        ttl = Number(r.body?.auth?.lease_duration ?? 0);
        renewable = Boolean(r.body?.auth?.renewable);
      }
      for (const s of this.sinks) await s.write(this.up, token);
    } catch (e) {
      const why = (e as Error).message;
      this.log.error(WHO, `login failed (method ${this.method.type}): ${why}`);
      if (this.cfg.exitOnErr) {
        this.onFatal(new Error(`auto-auth failed: ${why}`));
        return;
      }
      const wait = this.backoff * (0.75 + Math.random() * 0.25);
      this.backoff = Math.min(this.backoff * 2, this.cfg.maxBackoff);
      this.log.info(WHO, `retrying login in ${wait.toFixed(1)}s`);
      this.schedule(wait, () => this.login());
      return;
    }
    this.backoff = this.cfg.minBackoff;
    this.token = token;
    this.logins++;
    this.log.info(
      WHO,
      `authenticated (method ${this.method.type}, ttl ${ttl}s${renewable ? ', renewable' : ''}); token written to ${this.sinks.length} sink(s)`,
    );
    for (const l of this.listeners) l(token);
    this.first.resolve();
    this.watch(token, ttl, renewable, ttl);
  }

  /** Renew at 2/3 of the TTL (jittered); log in again near the end when renewal cannot extend it. */
  private watch(token: string, ttl: number, renewable: boolean, previous: number): void {
    if (ttl <= 0) return; // a token without expiry (root, periodic with no TTL): nothing to do
    const grace = Math.max(1, ttl * 0.1);
    if (!renewable || ttl < previous * 0.5) {
      // Renewal no longer helps (not renewable, or capped by its max TTL): log in again before it ends.
      this.schedule(Math.max(0, ttl - grace), () => this.login());
      return;
    }
    const sleep = ttl * (2 / 3) * (0.9 + Math.random() * 0.1);
    this.schedule(sleep, async () => {
      if (!sameToken(this.token, token)) return;
      try {
        const r = await this.up.json('POST', 'auth/token/renew-self', { token, body: {} });
        const next = Number(r.body?.auth?.lease_duration ?? 0);
        this.log.debug(WHO, `token renewed (ttl ${next}s)`);
        this.watch(token, next, Boolean(r.body?.auth?.renewable ?? true), ttl);
      } catch (e) {
        this.log.warn(WHO, `renewal failed (${(e as Error).message}); logging in again`);
        await this.login();
      }
    });
  }
}
