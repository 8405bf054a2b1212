/**
 * The router: match mount and route, authenticate, apply the ACL from the route's operation and
 * existence check, coerce and validate declared fields, call the handler, shape the response.
 * Handlers never look at policies.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { KeyholdError, denied, invalid, isKeyholdError, notFound, sealed, unsupported } from '../framework/errors.js';
import { coerceFields, parseBool } from '../framework/fields.js';
import type { Logger, MountInfo, RequestContext, TokenInfo } from '../framework/context.js';
import { matchRoute, type AnyRoute, type Operation, type Reply } from '../framework/route.js';
import { sendEmpty, sendError, sendReply } from './respond.js';
import { requestSizeLimit } from './http.js';
import { JSON_LIMITS_SAFE_LENGTH, jsonLimitViolation } from './json-limits.js';
import { FastRequest } from './fast-http.js';
import type { ResponseSink } from './respond.js';

/** A request from node:http or from the fast lane (which has read the body already). */
export type AnyRequest = IncomingMessage | FastRequest;

/** One resolved mount: its table entry, static routes and live engine instance. */
export interface MountedEngine {
  mount: MountInfo;
  routes: readonly AnyRoute[];
  instance: unknown;
}

/** Capability check for a token (ACL). */
export interface Authorizer {
  allowed(token: TokenInfo, capability: string, path: string): boolean;
}

/** An audit sink the router calls around every request (issue 8 adds file devices). */
export interface AuditHook {
  /** Called before the handler; throwing fails the request closed. */
  request(entry: AuditEntry): Promise<void>;
  /** `body` is `{ errors }` for a failure, else `{ data, auth }` of the reply (null for an empty reply). */
  response(entry: AuditEntry, status: number, body: unknown): Promise<void>;
  enabled(): boolean;
}

/** What is known about a request for audit. */
export interface AuditEntry {
  requestId: string;
  operation: Operation;
  path: string;
  remoteAddress: string;
  token: TokenInfo | null;
  data: Record<string, unknown>;
  /** Names of sensitive fields per the route declaration. */
  sensitive: Set<string>;
}

/** What the router needs from the core. */
export interface RouterCore {
  isSealed(): boolean;
  resolve(path: string): MountedEngine | null;
  lookupToken(id: string): Promise<TokenInfo | null>;
  /** A valid token's view when it needs no storage read or write (no use limit, cached), else undefined. */
  cachedToken?(id: string): TokenInfo | undefined;
  authorizer: Authorizer;
  audit?: AuditHook;
  logger: Logger;
  maxRequestSize: number;
  /** Called after a request whose token was on its last use (num_uses), to revoke it. */
  requestDone?(token: TokenInfo): Promise<void>;
}

const FORM = 'application/x-www-form-urlencoded';

function methodToOp(method: string, list: boolean): Operation | null {
  switch (method) {
    case 'GET':
      return list ? 'list' : 'read';
    case 'LIST': // fast lane
    case 'LOCK': // LIST, rewritten on the wire for node:http (list-verb.ts)
      return 'list';
    case 'POST':
    case 'PUT':
      return 'update';
    case 'DELETE':
      return 'delete';
    case 'PATCH':
      return 'patch';
    default:
      return null;
  }
}

/** Read the body with the size limit; resolves to a Buffer, rejects with 413. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) {
      reject(new KeyholdError('tooLarge', 'http: request body too large'));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > limit) {
        failed = true;
        chunks.length = 0;
        reject(new KeyholdError('tooLarge', 'http: request body too large'));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (!failed) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    req.on('error', (e) => {
      if (!failed) reject(e);
    });
  });
}

/** Parse a JSON or form body into an object; 400 on malformed JSON. */
export function parseBody(body: Buffer, contentType: string | undefined): Record<string, unknown> {
  if (body.length === 0) return {};
  const text = body.toString('utf8');
  // Vault sniffs: a body that starts like JSON is JSON whatever the Content-Type says.
  const first = text.charCodeAt(0);
  if (first === 0x7b && text.length <= JSON_LIMITS_SAFE_LENGTH) return parseJsonObject(text); // '{': the common case
  const ct = (contentType ?? '').toLowerCase();
  const trimmed = text.trimStart();
  const looksJson = trimmed.startsWith('{') || trimmed.startsWith('[');
  if (!looksJson && (ct.startsWith(FORM) || (!ct.includes('json') && /^[\w.%+-]+=/.test(trimmed)))) {
    return Object.fromEntries(new URLSearchParams(text));
  }
  if (trimmed === '') return {};
  const over = jsonLimitViolation(text);
  if (over) throw invalid(over);
  return parseJsonObject(text);
}

/** JSON.parse to an object; 400 for malformed JSON or a non-object. */
function parseJsonObject(text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw invalid(`error parsing JSON: ${(e as Error).message.split('\n')[0]}`);
  }
  if (v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw invalid('error parsing JSON: body must be a JSON object');
  return v as Record<string, unknown>;
}

/** Token from `X-Vault-Token`, else `Authorization: Bearer`. */
export function tokenFrom(req: { headers: Record<string, string | string[] | undefined> }): string | undefined {
  const x = req.headers['x-vault-token'];
  if (typeof x === 'string' && x !== '') return x;
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && auth.startsWith('Bearer ')) return auth.slice(7).trim();
  return undefined;
}

/** The request pipeline. */
export class Router {
  constructor(private readonly core: RouterCore) {}

  /** Handle one HTTP request end to end. */
  async handle(req: AnyRequest, res: ResponseSink): Promise<void> {
    const requestId = randomUUID();
    let mountType: string | undefined;
    // Tokens looked up for this request; one on its last use is revoked when the request ends.
    const seen: TokenInfo[] = [];
    try {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const rawPath = q === -1 ? url : url.slice(0, q);
      const query = q === -1 ? null : new URLSearchParams(url.slice(q + 1));
      if (!rawPath.startsWith('/v1/')) throw notFound();
      // keyhold has no response wrapping: refuse rather than hand back the unwrapped secret.
      if (req.headers['x-vault-wrap-ttl'] !== undefined) throw invalid('X-Vault-Wrap-TTL: response wrapping is not supported by keyhold');
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
      const method = req.method === 'HEAD' && trimSlashes(path) === 'sys/health' ? 'GET' : (req.method ?? '');
      const op0 = methodToOp(method, listFlag);
      if (!op0) throw unsupported();
      const limit = requestSizeLimit(req.socket, this.core.maxRequestSize);
      let body: Buffer;
      if (req instanceof FastRequest) {
        if (req.body.length > limit) throw new KeyholdError('tooLarge', 'http: request body too large');
        body = req.body;
      } else body = op0 === 'read' || op0 === 'list' ? await drain(req, limit) : await readBody(req, limit);
      const bodyData = parseBody(body, req.headers['content-type']);
      if (op0 === 'patch' && !String(req.headers['content-type'] ?? '').includes('merge-patch+json')) {
        throw new KeyholdError('unsupported', 'PATCH requires Content-Type application/merge-patch+json', { status: 415 });
      }
      const mounted = this.core.resolve(path);
      if (!mounted) {
        // Sealed: everything but the unauthenticated sys routes answers 503. Unsealed: an unknown
        // path is 404 for a valid token and 403 without one (Vault checks the token first).
        if (this.core.isSealed()) throw sealed();
        await this.requireToken(req, seen);
        throw notFound(`no handler for route "${path}". route entry not found.`);
      }
      mountType = mounted.mount.type;
      const sub = trimSlashes(path.slice(mounted.mount.path.length));
      const match = matchRoute(mounted.routes, sub);
      if (!match) {
        if (this.core.isSealed()) throw sealed();
        await this.requireToken(req, seen);
        throw notFound('unsupported path');
      }
      const { route, params } = match;
      if (this.core.isSealed() && !route.allowSealed) throw sealed();
      let handlerOp: Operation = op0;
      if (!route.operations[op0] && !(op0 === 'update' && route.operations.create)) throw unsupported();

      // Request data: query (GET/DELETE/LIST) and body, path parameters win. Object.fromEntries
      // defines own properties, so a "__proto__" key in a body stays data (no prototype change).
      const raw: Record<string, unknown> = {};
      if (query) for (const [k, v] of query) setOwn(raw, k, v);
      for (const k in bodyData) if (Object.hasOwn(bodyData, k)) setOwn(raw, k, bodyData[k]);
      for (const k in params) setOwn(raw, k, params[k]);

      let token: TokenInfo | null = null;
      if (!route.unauthenticated) token = this.cachedToken(req, seen) ?? (await this.requireToken(req, seen));
      else {
        const id = tokenFrom(req);
        if (id) token = await this.core.lookupToken(id);
      }

      // Field errors wait until the ACL has spoken (Vault checks the ACL before the backend validates),
      // so a caller without access learns nothing about the fields; the existence check then sees
      // only the path parameters.
      let coerced: { data: Record<string, unknown>; unknown: string[] } | null = null;
      let fieldError: unknown = null;
      try {
        coerced = coerceFields(route.fields, raw);
      } catch (e) {
        fieldError = e;
      }
      const data: Record<string, unknown> = coerced?.data ?? paramsOnly(route, params);
      const unknown = coerced?.unknown ?? [];
      const authorizer = this.core.authorizer;
      const ctx: RequestContext<unknown, Record<string, unknown>> = {
        engine: mounted.instance,
        data: data as Record<string, unknown>,
        raw,
        operation: op0,
        path: sub,
        fullPath: trimSlashes(path),
        params,
        mount: mounted.mount,
        token,
        requestId,
        remoteAddress: req.socket.remoteAddress ?? 'unix',
        headers: req.headers,
        allowed: (cap, p) => (token ? authorizer.allowed(token, cap, p) : false),
      };
      if (op0 === 'update' && route.exists) {
        const check = route.exists(ctx);
        const exists = typeof check === 'boolean' ? check : await check;
        if (!exists) handlerOp = 'create';
      }
      ctx.operation = handlerOp;
      if (!route.unauthenticated && token) {
        const aclPath = handlerOp === 'list' ? ctx.fullPath + '/' : ctx.fullPath;
        if (!authorizer.allowed(token, handlerOp, aclPath) || (route.sudo && !authorizer.allowed(token, 'sudo', aclPath))) {
          // Refusals are audited too (Vault logs them with "permission denied"), so an operator sees probing.
          const audit = this.core.audit?.enabled() ? this.core.audit : undefined;
          if (audit) {
            const entry: AuditEntry = { requestId, operation: handlerOp, path: ctx.fullPath, remoteAddress: ctx.remoteAddress, token, data: raw, sensitive: sensitiveOf(route) };
            await audit.request(entry);
            await audit.response(entry, 403, { errors: ['permission denied'] });
          }
          throw denied();
        }
      }
      if (fieldError) throw fieldError;
      for (const rule of route.rules ?? []) {
        if (rule.kind === 'oneOf' && !rule.fields.some((n) => data[n] !== undefined && data[n] !== '')) {
          throw invalid(rule.fields.join(' or '), 'one of these fields is required');
        }
        if (rule.kind === 'requires' && data[rule.field] !== undefined && data[rule.needs] === undefined) {
          throw invalid(rule.field, `requires ${rule.needs}`);
        }
      }
      const audit = this.core.audit?.enabled() ? this.core.audit : undefined;
      const entry: AuditEntry | undefined = audit
        ? { requestId, operation: handlerOp, path: ctx.fullPath, remoteAddress: ctx.remoteAddress, token, data: raw, sensitive: sensitiveOf(route) }
        : undefined;
      if (audit && entry) await audit.request(entry);
      const handler = route.operations[handlerOp] ?? (handlerOp === 'create' ? route.operations.update : undefined);
      if (!handler) throw unsupported();
      let reply: Reply | void;
      try {
        reply = await handler(ctx);
      } catch (e) {
        if (audit && entry) await audit.response(entry, isKeyholdError(e) ? e.status : 500, { errors: [(e as Error).message] });
        throw e;
      }
      // Vault: a list answer with an empty `keys` is a 404, as is one with neither keys nor other
      // data; warnings, or data besides keys (list metadata), keep it (vault/wrapping.go).
      if (reply && handlerOp === 'list' && !reply.raw && !reply.warnings?.length) {
        const data = reply.data as Record<string, unknown> | null | undefined;
        const keys = data?.keys;
        if (keys === undefined || keys === null ? !data || Object.keys(data).length === 0 : Array.isArray(keys) && keys.length === 0) reply = undefined;
      }
      if (unknown.length && reply) {
        reply.warnings = [...(reply.warnings ?? []), `Endpoint ignored these unrecognized parameters: [${unknown.sort().join(' ')}]`];
      }
      if (!reply) {
        if (audit && entry) await audit.response(entry, handlerOp === 'read' || handlerOp === 'list' ? 404 : 204, null);
        if (handlerOp === 'read' || handlerOp === 'list') throw notFound();
        sendEmpty(res);
        return;
      }
      if (audit && entry) await audit.response(entry, reply.status ?? 200, { data: reply.data ?? null, auth: reply.auth ?? null });
      // Vault copies `data` to the top level of sys/ answers (http/handler.go, handleLogicalWithInjector).
      sendReply(res, requestId, reply, mountType, 200, path.startsWith('sys/'));
    } catch (e) {
      this.fail(res, e);
    } finally {
      for (const t of seen) {
        if (t.lastUse && this.core.requestDone) {
          await this.core.requestDone(t).catch((e: unknown) => this.core.logger.error('revoking a spent token failed', { error: (e as Error)?.message }));
        }
      }
    }
  }

  /** The request's token, or 403 when it carries none or an unknown/expired one. */
  /** The request's token when the core can tell without storage (the hot path), else undefined. */
  private cachedToken(req: AnyRequest, seen: TokenInfo[]): TokenInfo | undefined {
    const id = tokenFrom(req);
    if (!id || !this.core.cachedToken) return undefined;
    const token = this.core.cachedToken(id);
    if (!token) return undefined; // unknown here: the full lookup decides (and answers 403)
    seen.push(token);
    return token;
  }

  private async requireToken(req: AnyRequest, seen: TokenInfo[]): Promise<TokenInfo> {
    const id = tokenFrom(req);
    if (!id) throw denied();
    const token = await this.core.lookupToken(id);
    if (!token) throw denied();
    seen.push(token);
    return token;
  }

  private fail(res: ResponseSink, e: unknown): void {
    if (isKeyholdError(e)) {
      const msgs = e.errors ?? (e.message === '' ? [] : [e.message]);
      // 413: the connection stays open and Node discards the rest of the body, so the client reads
      // the answer instead of a reset (closing while it still sends would make the kernel send RST).
      sendError(res, e.status, msgs, e.data);
      return;
    }
    // A name longer than the storage can hold (file backend: 255 bytes per encoded segment) is the
    // client's mistake, not an internal error.
    if ((e as NodeJS.ErrnoException)?.code === 'ENAMETOOLONG') {
      sendError(res, 400, ['path: a name in this request is too long to store']);
      return;
    }
    // Unexpected: log the kind only; messages from libraries may hold data, so say little.
    this.core.logger.error('internal error', { error: (e as Error)?.name, message: (e as Error)?.message });
    sendError(res, 500, ['internal error']);
  }
}

/** `p` without trailing slashes. */
function trimSlashes(p: string): string {
  let e = p.length;
  while (e > 0 && p.charCodeAt(e - 1) === 0x2f) e--;
  return e === p.length ? p : p.slice(0, e);
}

/** `o[k] = v` as an own data property even for "__proto__" (never a prototype change). */
function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
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

function sensitiveOf(route: AnyRoute): Set<string> {
  const s = new Set<string>();
  for (const [name, field] of Object.entries(route.fields)) if (field.spec.sensitive) s.add(name);
  return s;
}

/** GET/LIST: the body is ignored, but must be consumed (bounded). */
async function drain(req: IncomingMessage, limit: number): Promise<Buffer> {
  if (!req.headers['content-length'] && !req.headers['transfer-encoding']) {
    req.resume();
    return Buffer.alloc(0);
  }
  return readBody(req, limit);
}
