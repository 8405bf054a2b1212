/**
 * The router: match mount and route, authenticate, apply the ACL from the route's operation and
 * existence check, coerce and validate declared fields, call the handler, shape the response.
 * Handlers never look at policies.
 */
import { KeyholdError, invalid, isKeyholdError, notFound, sealed, unsupported } from '../framework/errors.js';
import { coerceFields, parseBool } from '../framework/fields.js';
import type { RequestContext, TlsPeer } from '../framework/context.js';
import { matchRoute, type AnyRoute, type Reply } from '../framework/route.js';
import { envelopeOf, sendEmpty, sendError, sendReply } from './respond.js';
import { requestSizeLimit } from './http.js';
import { parseWrapTtl } from '../auth/wrapping.js';
import { FastRequest } from './fast-http.js';
import type { ResponseSink } from './respond.js';
import { withLateHeaders } from './forward.js';
import { carriesForwarding, refuseForwarding } from './forward-signature.js';
import { Flow, clientAddress, type AnyRequest } from './flow.js';
import { drain, parseBody, readBody } from './request-body.js';
import { methodToOp, originForm, trimSlashes } from './request-head.js';
import { engineRequestHeaders, withEngineHeaders } from './mount-headers.js';
import { quotaStep } from './quota-stage.js';
import { startStream } from './stream-reply.js';
import { corsStep } from './cors.js';
import { auditRequest, auditResponse, refuse } from './audit-stage.js';
import { authenticate, requireToken, spendTokens } from './authenticate-stage.js';
import type { RouterCore } from './router-core.js';

/**
 * The request pipeline (design note section 6; the order follows Vault's vault/request_handling.go):
 * parse -> read body -> resolve mount and route -> authenticate -> coerce fields -> existence check
 * -> authorize -> validate -> audit request -> dispatch -> shape reply -> wrap -> audit response
 * -> send. Each stage is one small method with one job, or a function of its own file (cors.ts,
 * quota-stage.ts, authenticate-stage.ts, audit-stage.ts); a stage that needs no I/O stays synchronous
 * so the hot path (a cached token, an in-memory key) costs no promise turns.
 */
export class Router {
  constructor(private readonly core: RouterCore) {}

  /** Handle one HTTP request end to end. */
  async handle(req: AnyRequest, res: ResponseSink): Promise<void> {
    const f = new Flow(req, res);
    const inFlight = this.core.inFlight; // sys/in-flight-req
    inFlight?.add(f);
    const t0 = this.core.telemetry ? performance.now() : 0; // telemetry hook (issue 27)
    try {
      if (corsStep(this.core.cors, f)) return; // CORS first, as in Vault's handler chain (cors.ts)
      this.parse(f);
      this.wrapRequest(f);
      const reading = this.readBody(f);
      if (reading) await reading;
      if (!this.resolve(f)) return await this.unknownPath(f);
      if (carriesForwarding(f.req.headers)) await this.forwarded(f); // only a forwarded request pays
      const refused = quotaStep(this.core, f); // rate-limit quotas, before forwarding and auth (quota-stage.ts)
      if (refused === true || (refused !== false && (await refused))) return;
      if (this.core.cluster && (await this.forward(f))) return;
      const opening = this.openAccess(f);
      if (opening) await opening;
      const authenticating = authenticate(this.core, f);
      if (authenticating) await authenticating;
      const ctx = this.coerce(f);
      const checking = this.existence(f, ctx);
      if (checking) await checking;
      const authorizing = this.authorize(f, ctx);
      if (authorizing) await authorizing;
      this.validate(f);
      await auditRequest(this.core, f);
      await this.dispatch(f, ctx);
      const mfa = this.mfaHeader(f);
      if (mfa) await mfa;
      this.shapeReply(f);
      const wrapping = this.wrapResponse(f);
      if (wrapping) await wrapping;
      await auditResponse(this.core, f);
      this.send(f);
    } catch (e) {
      // A standby found out late that the request writes (an upsert, a use-limited token): the
      // storage refused the write, nothing was answered yet, so the active gets the whole request.
      if ((e as Error)?.name === 'NotActiveError' && this.core.cluster?.standby() && !res.headersSent)
        await this.forwardNow(f).catch((e2: unknown) => this.fail(res, e2));
      else this.fail(f.res, e);
    } finally {
      if (!f.streaming) inFlight?.delete(f);
      if (t0) this.core.telemetry!.request(f, t0); // telemetry hook (issue 27)
      if (f.seen.length) await spendTokens(this.core, f);
    }
  }

  /** Stage parse: URL to path, query and operation; malformed paths and unknown methods refused. */
  private parse(f: Flow): void {
    const url = originForm(f.req.url ?? '/');
    const q = url.indexOf('?');
    const rawPath = q === -1 ? url : url.slice(0, q);
    const query = q === -1 ? null : new URLSearchParams(url.slice(q + 1));
    if (!rawPath.startsWith('/v1/')) throw notFound();
    let listFlag = false;
    if (query?.has('list')) {
      listFlag = parseBool('list', query.get('list'));
      query.delete('list');
    }
    let path = rawPath.slice(4);
    try {
      path = decodeURIComponent(path);
    } catch {
      throw invalid('path', 'invalid percent-encoding');
    }
    if (path.includes('\0')) throw invalid('path', 'must not contain NUL');
    // HEAD is only meaningful for load-balancer health checks (Vault answers it on sys/health).
    const method = f.req.method === 'HEAD' && trimSlashes(path) === 'sys/health' ? 'GET' : (f.req.method ?? '');
    const op = methodToOp(method, listFlag);
    if (!op) throw unsupported();
    if (op === 'patch' && !String(f.req.headers['content-type'] ?? '').includes('merge-patch+json')) {
      throw new KeyholdError('unsupported', 'PATCH requires Content-Type application/merge-patch+json', {
        status: 415,
      });
    }
    f.path = path;
    f.query = query;
    f.op = op;
  }

  /**
   * Stage wrap (request side): X-Vault-Wrap-TTL read as Vault's requestWrapInfo does (seconds or a
   * duration; negative refused), capped at 768h. Without a wrapper the header is refused rather than
   * the secret handed back unwrapped.
   */
  private wrapRequest(f: Flow): void {
    const h = f.req.headers['x-vault-wrap-ttl'];
    if (h === undefined || h === '') return;
    if (!this.core.wrapping) throw invalid('X-Vault-Wrap-TTL: response wrapping is not available');
    f.wrapTtl = parseWrapTtl(Array.isArray(h) ? h[0]! : h);
  }

  /** Stage read body: the size-limited body parsed as JSON or a form (the fast lane has read it already). */
  private readBody(f: Flow): Promise<void> | void {
    const req = f.req;
    const limit = requestSizeLimit(req.socket, this.core.maxRequestSize);
    if (req instanceof FastRequest) {
      if (req.body.length > limit) throw new KeyholdError('tooLarge', 'http: request body too large');
      f.rawBody = req.body;
      f.body = parseBody(req.body, req.headers['content-type']);
      return;
    }
    const reading = f.op === 'read' || f.op === 'list' ? drain(req, limit) : readBody(req, limit);
    return reading.then((body) => {
      f.rawBody = body;
      f.body = parseBody(body, req.headers['content-type']);
    });
  }

  /** Stage resolve: the mount and the route under it; false when none matches. */
  private resolve(f: Flow): boolean {
    const mounted = this.core.resolve(f.path);
    if (!mounted) return false;
    f.mounted = mounted;
    f.sub = trimSlashes(f.path.slice(mounted.mount.path.length));
    const match = matchRoute(mounted.routes, f.sub);
    if (!match) return false;
    const route = match.route;
    if (this.core.isSealed() && !route.allowSealed) throw sealed();
    if (!route.operations[f.op] && !(f.op === 'update' && route.operations.create)) throw unsupported();
    f.route = route;
    f.params = match.params;
    // Request data: query (GET/DELETE/LIST) and body, path parameters win. Object.fromEntries
    // defines own properties, so a "__proto__" key in a body stays data (no prototype change).
    const raw: Record<string, unknown> = {};
    if (f.query) for (const [k, v] of f.query) setOwn(raw, k, v);
    const body = f.body;
    for (const k in body) if (Object.hasOwn(body, k)) setOwn(raw, k, body[k]);
    for (const k in match.params) setOwn(raw, k, match.params[k]);
    f.raw = raw;
    return true;
  }

  /**
   * No mount or no route: sealed answers 503 (only the unauthenticated sys routes answer then);
   * unsealed, 404 for a valid token and 403 without one (Vault checks the token first).
   */
  private async unknownPath(f: Flow): Promise<never> {
    if (this.core.isSealed()) throw sealed();
    await requireToken(this.core, f);
    throw notFound(f.mounted ? 'unsupported path' : `no handler for route "${f.path}". route entry not found.`);
  }

  /**
   * Stage forward (cluster nodes only): a standby sends writes, and whatever it is told not to
   * serve, to the active node and relays the answer (true: answered); the active marks its write
   * answers with X-Vault-Index for read-your-writes. The decision is the cluster's (forward.ts).
   */
  private async forward(f: Flow): Promise<boolean> {
    const cluster = this.core.cluster!;
    if (cluster.active() && f.op !== 'read' && f.op !== 'list') {
      // Only answers after a write carry the index (an encrypt writes nothing: no header, no HMAC).
      const before = cluster.writtenIndex();
      f.res = withLateHeaders(f.res, () => {
        const index = cluster.writtenIndex() > before ? cluster.indexHeader() : null;
        return index ? { 'X-Vault-Index': index } : null;
      });
      return false;
    }
    if ((await cluster.place(f.op, f.route!.standby, f.req.headers)) === 'local') return false;
    await this.forwardNow(f);
    return true;
  }

  /**
   * Stage forwarded: a request carrying the forwarding signature or a client certificate in a
   * header goes on only when a member of this cluster signed it for this node (forward-signature.ts,
   * else a 400 naming the header). Recorded on the flow: the quota stage does not count it again,
   * and the cert auth method reads the forwarded certificate as the connection's.
   */
  private async forwarded(f: Flow): Promise<void> {
    const cluster = this.core.cluster;
    if (!cluster) throw refuseForwarding(f.req.headers, 'this node is not part of a cluster');
    const { method = 'GET', url = '/', headers } = f.req; // LOCK (node:http's LIST) is checked as LIST
    const accepted = await cluster.acceptForwarded(method, url, headers, f.rawBody);
    f.forwardedTls = accepted.peer;
    f.forwardedFor = accepted.client;
    f.forwardedByMember = true;
  }

  /** The TLS side of the client's own connection (undefined over plain HTTP or a Unix socket). */
  private connectionTls(f: Flow): TlsPeer | undefined {
    return (f.req.socket as { encrypted?: boolean }).encrypted ? (f.req.socket as unknown as TlsPeer) : undefined;
  }

  /** Relay the request to the active node as received. */
  private forwardNow(f: Flow): Promise<void> {
    const sent = this.core.cluster!.forward({
      method: f.req.method ?? 'GET',
      url: f.req.url ?? '/',
      headers: f.req.headers,
      body: f.rawBody,
      res: f.res,
      tls: this.connectionTls(f),
      client: clientAddress(f),
    });
    return this.core.telemetry ? this.core.telemetry.forwarded(sent, performance.now()) : sent; // telemetry hook (issue 27)
  }

  /**
   * Stage open access: whether this request needs a token. Fixed per route (`unauthenticated`), or
   * decided per request by the route's `unauthenticatedWhen` predicate (transit's jwks/:name of a
   * key with public_jwks).
   */
  private openAccess(f: Flow): Promise<void> | void {
    const route = f.route!;
    f.open = route.unauthenticated === true;
    if (f.open || !route.unauthenticatedWhen) return;
    const decided = route.unauthenticatedWhen({ engine: f.mounted!.instance, params: f.params });
    if (typeof decided === 'boolean') {
      f.open = decided;
      return;
    }
    return decided.then((open) => {
      f.open = open;
    });
  }

  /**
   * Stage coerce: the declared fields typed and checked, and the handler's context. Field errors
   * wait until the ACL has spoken (Vault checks the ACL before the backend validates), so a caller
   * without access learns nothing about the fields; the existence check then sees only the path
   * parameters.
   */
  private coerce(f: Flow): RequestContext<unknown, Record<string, unknown>> {
    const route = f.route!;
    try {
      const coerced = coerceFields(route.fields, f.raw);
      f.data = coerced.data;
      f.unknownFields = coerced.unknown;
    } catch (e) {
      f.fieldError = e;
      f.data = paramsOnly(route, f.params);
    }
    const token = f.token;
    const authorizer = this.core.authorizer;
    const mounted = f.mounted!;
    const ctx: RequestContext<unknown, Record<string, unknown>> = {
      engine: mounted.instance,
      data: f.data,
      raw: f.raw,
      operation: f.op,
      path: f.sub,
      fullPath: trimSlashes(f.path),
      params: f.params,
      mount: mounted.mount,
      token,
      requestId: f.requestId,
      remoteAddress: clientAddress(f),
      headers: engineRequestHeaders(mounted.mount, f.req.headers), // its mount's passthrough_request_headers
      body: f.rawBody,
      tls: f.forwardedTls ?? this.connectionTls(f),
      allowed: (cap, p) => (token ? authorizer.allowed(token, cap, p) : false),
    };
    f.ctx = ctx;
    return ctx;
  }

  /** Stage existence check: an update of something that does not exist is a create (Vault's upsert rule). */
  private existence(f: Flow, ctx: RequestContext<unknown, Record<string, unknown>>): Promise<void> | void {
    const route = f.route!;
    if (f.op !== 'update' || !route.exists) return;
    const check = route.exists(ctx);
    if (typeof check === 'boolean') {
      if (!check) f.op = ctx.operation = 'create';
      return;
    }
    return check.then((exists) => {
      if (!exists) f.op = ctx.operation = 'create';
    });
  }

  /** Stage authorize: the ACL decides from the operation and path (and sudo where the route needs it). */
  private authorize(f: Flow, ctx: RequestContext<unknown, Record<string, unknown>>): Promise<void> | void {
    const route = f.route!;
    const token = f.token;
    if (f.open || !token) return;
    const authorizer = this.core.authorizer;
    const aclPath = f.op === 'list' ? ctx.fullPath + '/' : ctx.fullPath;
    if (authorizer.check) {
      const r = authorizer.check(token, {
        operation: f.op,
        path: aclPath,
        data: requestData(f),
        wrapTtl: f.wrapTtl > 0 ? f.wrapTtl : undefined,
      });
      if (r.allowed && (!route.sudo || r.rootPrivs)) return;
    } else if (authorizer.allowed(token, f.op, aclPath) && (!route.sudo || authorizer.allowed(token, 'sudo', aclPath)))
      return;
    return refuse(this.core, f);
  }

  /** Stage validate: the field error held back for the ACL, then the route's cross-field rules. */
  private validate(f: Flow): void {
    if (f.fieldError) throw f.fieldError;
    const rules = f.route!.rules;
    if (!rules) return;
    const data = f.data;
    for (const rule of rules) {
      if (rule.kind === 'oneOf' && !rule.fields.some((n) => data[n] !== undefined && data[n] !== '')) {
        throw invalid(rule.fields.join(' or '), 'one of these fields is required');
      }
      if (rule.kind === 'requires' && data[rule.field] !== undefined && data[rule.needs] === undefined) {
        throw invalid(rule.field, `requires ${rule.needs}`);
      }
    }
  }

  /** Stage dispatch: the route's handler for the operation; a failure is audited with its status. */
  private async dispatch(f: Flow, ctx: RequestContext<unknown, Record<string, unknown>>): Promise<void> {
    const route = f.route!;
    const handler = route.operations[f.op] ?? (f.op === 'create' ? route.operations.update : undefined);
    if (!handler) throw unsupported();
    try {
      const reply = handler(ctx);
      f.reply = (reply instanceof Promise ? await reply : reply) ?? undefined;
    } catch (e) {
      if (f.audit)
        await f.auditor!.response(f.audit, isKeyholdError(e) ? e.status : 500, { errors: [(e as Error).message] });
      throw e;
    }
  }

  /**
   * Stage MFA header (Vault's single-phase login MFA): a login answered with `mfa_requirement`
   * completes at once when the request carries `X-Vault-MFA: <method id or name>:<passcode>`.
   */
  private mfaHeader(f: Flow): Promise<void> | void {
    const h = f.req.headers['x-vault-mfa'];
    if (h === undefined || !this.core.loginMfa) return;
    const required = (f.reply?.auth as { mfa_requirement?: { mfa_request_id?: string } | null } | undefined)
      ?.mfa_requirement;
    if (!required?.mfa_request_id) return;
    return this.core.loginMfa.validateHeader(required.mfa_request_id, h).then(({ auth, warnings }) => {
      f.reply = { auth, data: null, ...(warnings.length ? { warnings } : {}) };
    });
  }

  /**
   * Stage shape reply: Vault's list rule (an answer with an empty `keys`, or with neither keys nor
   * other data, is a 404; warnings or data besides keys keep it: vault/wrapping.go), and a warning
   * naming unrecognised parameters.
   */
  private shapeReply(f: Flow): void {
    let reply = f.reply;
    if (reply && f.op === 'list' && !reply.raw && !reply.warnings?.length) {
      const data = reply.data as Record<string, unknown> | null | undefined;
      const keys = data?.keys;
      if (
        keys === undefined || keys === null
          ? !data || Object.keys(data).length === 0
          : Array.isArray(keys) && keys.length === 0
      )
        reply = undefined;
    }
    if (f.unknownFields.length && reply && !f.route!.anyFields) {
      reply.warnings = [
        ...(reply.warnings ?? []),
        `Endpoint ignored these unrecognized parameters: [${f.unknownFields.sort().join(' ')}]`,
      ];
    }
    f.reply = reply;
  }

  /**
   * Stage wrap (response side, Vault's wrapInCubbyhole): a non-empty, non-error answer to a request
   * with X-Vault-Wrap-TTL is stored in a new single-use token's cubbyhole and replaced by `wrap_info`.
   * An empty answer (204/404) is not wrapped, as in Vault.
   */
  private wrapResponse(f: Flow): Promise<void> | void {
    const reply = f.reply;
    if (f.wrapTtl <= 0 || !reply || reply.raw || reply.stream || (reply.status !== undefined && reply.status >= 400))
      return;
    const original = envelopeJson(f.requestId, reply, f.mounted!.mount.type);
    const accessor = reply.wrappedAccessor ?? (typeof reply.auth?.accessor === 'string' ? reply.auth.accessor : '');
    return this.core.wrapping!.wrap(original, f.wrapTtl, trimSlashes(f.path), accessor).then((info) => {
      const body = `{"request_id":"${f.requestId}","lease_id":"","renewable":false,"lease_duration":0,"data":null,"wrap_info":${JSON.stringify(info)},"warnings":${reply.warnings?.length ? JSON.stringify(reply.warnings) : 'null'},"auth":null,"mount_type":""}\n`;
      f.reply = { raw: { contentType: 'application/json', body, status: 200 }, data: null, wrapInfo: { ...info } };
    });
  }

  /**
   * Stage send: the envelope; Vault copies `data` to the top level of the system backend's legacy
   * answers (http/handler.go `injectDataIntoTopRoutes`: sys/mounts, sys/policy, sys/auth, ...). Its
   * secret-sync paths are not among them, so the sys/sync/ module's answers carry `data` only (an
   * association map would otherwise be sent twice).
   */
  private send(f: Flow): void {
    const reply = f.reply;
    if (!reply) {
      if (f.op === 'read' || f.op === 'list') throw notFound();
      sendEmpty(f.res);
      return;
    }
    if (reply.stream) return startStream(f, reply.stream, this.core.inFlight); // sys/monitor (stream-reply.ts)
    const mount = f.mounted!.mount;
    if (reply.headers) f.res = withEngineHeaders(f.res, mount, reply.headers); // its mount's allowed_response_headers
    sendReply(f.res, f.requestId, reply, mount.type, 200, f.path.startsWith('sys/') && mount.path === 'sys/');
  }

  private fail(res: ResponseSink, e: unknown): void {
    // Storage errors that say "try later" (database unreachable, lock lost): 503 with their message.
    const name = (e as Error)?.name;
    if (name === 'StorageUnavailableError' || name === 'NotActiveError') {
      sendError(res, 503, [(e as Error).message]);
      return;
    }
    if (isKeyholdError(e)) {
      const msgs = e.errors ?? (e.message === '' ? [] : [e.message]);
      // 413: the connection stays open and Node discards the rest of the body, so the client reads
      // the answer instead of a reset (closing while it still sends would make the kernel send RST).
      sendError(res, e.status, msgs, e.data);
      return;
    }
    // Unexpected: log the kind only; messages from libraries may hold data, so say little.
    this.core.logger.error('internal error', { error: (e as Error)?.name, message: (e as Error)?.message });
    sendError(res, 500, ['internal error']);
  }
}

/** The request's data for parameter constraints (Vault's req.Data): query and body, not path parameters. */
function requestData(f: Flow): Record<string, unknown> {
  if (!f.query) return f.body;
  const d: Record<string, unknown> = {};
  for (const [k, v] of f.query) setOwn(d, k, v);
  const body = f.body;
  for (const k in body) if (Object.hasOwn(body, k)) setOwn(d, k, body[k]);
  return d;
}

/** The HTTP body Vault would have sent for `reply` (what unwrapping hands back), without sys/ top-level copies. */
function envelopeJson(requestId: string, reply: Reply, mountType: string): string {
  return JSON.stringify(envelopeOf(requestId, reply, mountType)) + '\n';
}

/** `o[k] = v` as an own data property even for "__proto__" (never a prototype change). */
function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__')
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/** Path parameters coerced leniently (for an existence check when the body's fields are invalid). */
function paramsOnly(route: AnyRoute, params: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) {
    try {
      out[k] = route.fields[k] ? route.fields[k]!.coerce(k, v) : v;
    } catch {
      out[k] = v;
    }
  }
  return out;
}
