/**
 * The router's quota stage (design note section 7: between resolve and authenticate, where Vault's
 * rateLimitQuotaWrapping sits, so a flood is refused before any token lookup, and on every node of a
 * cluster before forwarding). A request no quota governs costs one index lookup and allocates nothing.
 * Over the limit: 429 with Vault's text (`request path "<path>": rate limit quota exceeded`) and,
 * when enabled, Retry-After and the X-Ratelimit-* headers (on every answer under a quota, as Vault).
 * A request a standby forwarded, signed (the router's forwarded stage checked it: forward-signature.ts),
 * was counted by that standby for its real client: the active lets it through uncounted, so each
 * request is counted once. The stage reads that as a boolean of the flow: no crypto here.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { MountInfo } from '../framework/context.js';
import type { Operation } from '../framework/route.js';
import type { QuotaManager } from '../quotas/quota-manager.js';
import type { Verdict } from '../quotas/rate-limit.js';
import { withLateHeaders } from './forward.js';
import { sendError, type ResponseSink } from './respond.js';

/** The part of the request flow the stage reads and writes (the router's Flow fits it). */
export interface QuotaFlow {
  path: string;
  sub: string;
  op: Operation;
  requestId: string;
  raw: Record<string, unknown>;
  req: { method?: string; url?: string; socket: { remoteAddress?: string }; headers: IncomingHttpHeaders };
  /** A member of this cluster forwarded the request, with a valid signature: counted there already. */
  forwardedByMember: boolean;
  res: ResponseSink;
  mounted: { mount: MountInfo; instance: unknown } | null;
}

/** An audit hook as the stage uses it (the router's AuditHook fits it). */
export interface QuotaAudit {
  enabled(): boolean;
  request(entry: QuotaAuditEntry): Promise<void>;
  response(entry: QuotaAuditEntry, status: number, body: unknown): Promise<void>;
}

/** The audit entry of a refused request (no token: quotas are checked before authentication). */
export interface QuotaAuditEntry {
  requestId: string;
  operation: Operation;
  path: string;
  remoteAddress: string;
  token: null;
  data: Record<string, unknown>;
  sensitive: Set<string>;
}

/** The router's quota step: nothing to do (false) when no quota exists, else applyQuotas. */
export function quotaStep(
  core: {
    quotas?: QuotaManager;
    audit?: QuotaAudit;
    logger: { warn(msg: string, fields?: Record<string, unknown>): void };
  },
  f: QuotaFlow,
): boolean | Promise<boolean> {
  const quotas = core.quotas;
  if (quotas === undefined || quotas.empty) return false;
  if (f.forwardedByMember) return false; // counted by the standby that forwarded it
  return applyQuotas(quotas, f, core.audit, (m, x) => core.logger.warn(m, x));
}

/** An engine that can tell the role of a login request (AppRole resolves role_id; JWT reads `role`). */
interface RoleResolver {
  resolveLoginRole?(data: Record<string, unknown>): Promise<string | undefined> | string | undefined;
}

/**
 * Apply the quotas to a resolved request. Returns true when the request was refused and answered
 * (429), false when it goes on; a promise only when a role quota needs the login's role looked up.
 */
export function applyQuotas(
  quotas: QuotaManager,
  f: QuotaFlow,
  audit: QuotaAudit | undefined,
  warn: (msg: string, fields: Record<string, unknown>) => void,
): boolean | Promise<boolean> {
  const mount = f.mounted!.mount;
  if (f.sub === 'login' || f.sub.startsWith('login/')) {
    if (quotas.needsRole(mount.path)) {
      const resolver = f.mounted!.instance as RoleResolver;
      const role = resolver.resolveLoginRole
        ? resolver.resolveLoginRole(f.raw)
        : typeof f.raw.role === 'string'
          ? f.raw.role
          : undefined;
      if (role instanceof Promise) return role.then((r) => decide(quotas, f, mount, r, audit, warn));
      return decide(quotas, f, mount, role, audit, warn);
    }
  }
  return decide(quotas, f, mount, undefined, audit, warn);
}

function decide(
  quotas: QuotaManager,
  f: QuotaFlow,
  mount: MountInfo,
  role: string | undefined,
  audit: QuotaAudit | undefined,
  warn: (msg: string, fields: Record<string, unknown>) => void,
): boolean | Promise<boolean> {
  const path = trimSlashes(f.path);
  const v = quotas.check(path, mount.path, f.sub, f.req.socket.remoteAddress ?? 'unix', role);
  if (v === null) return false;
  const headers = quotas.config.enable_rate_limit_response_headers ? headersOf(v) : null;
  if (headers) f.res = withLateHeaders(f.res, () => headers);
  if (v.allowed) return false;
  const message = `request path ${JSON.stringify(path)}: rate limit quota exceeded`;
  sendError(f.res, 429, [message]);
  if (!quotas.config.enable_rate_limit_audit_logging || !audit?.enabled()) return true;
  const entry: QuotaAuditEntry = {
    requestId: f.requestId,
    operation: f.op,
    path,
    remoteAddress: f.req.socket.remoteAddress ?? 'unix',
    token: null,
    data: {},
    sensitive: new Set(),
  };
  // Best effort, as Vault: the refusal stands whether or not a device logged it.
  return audit
    .request(entry)
    .then(() => audit.response(entry, 429, { errors: [message] }))
    .catch((e: unknown) =>
      warn('failed to audit a request refused by a rate limit quota', { error: (e as Error)?.message }),
    )
    .then(() => true);
}

/** The verdict's headers, copied (the verdict object is reused by the next request). */
function headersOf(v: Verdict): Record<string, string> {
  const h: Record<string, string> = {
    'X-Ratelimit-Limit': String(v.limit),
    'X-Ratelimit-Remaining': String(v.remaining),
    'X-Ratelimit-Reset': String(v.reset),
  };
  if (!v.allowed) h['Retry-After'] = String(v.reset);
  return h;
}

function trimSlashes(p: string): string {
  let e = p.length;
  while (e > 0 && p.charCodeAt(e - 1) === 0x2f) e--;
  return e === p.length ? p : p.slice(0, e);
}
