/**
 * The router's audit stages: the request is logged before its handler runs (a failing device fails
 * the request closed) and the answer after it; refusals (403) are audited too, as Vault logs them with
 * "permission denied", so an operator sees probing.
 */
import { denied } from '../framework/errors.js';
import type { AnyRoute } from '../framework/route.js';
import { clientAddress, type AuditEntry, type AuditHook, type Flow } from './flow.js';
import { trimSlashes } from './request-head.js';
import type { RouterCore } from './router-core.js';

/** The core's parts the audit stages use. */
type AuditCore = Pick<RouterCore, 'audit' | 'telemetry'>;

/** The core's audit hook when a device is enabled, else undefined. */
export function auditHook(core: AuditCore): AuditHook | undefined {
  const audit = core.audit;
  return audit?.enabled() ? audit : undefined;
}

function auditEntry(f: Flow): AuditEntry {
  return {
    requestId: f.requestId,
    operation: f.op,
    path: f.ctx!.fullPath,
    remoteAddress: f.ctx!.remoteAddress,
    token: f.token,
    data: f.raw,
    sensitive: sensitiveOf(f.route!),
    headers: f.req.headers,
  };
}

/** Stage audit request: logged before the handler runs; a failing device fails the request closed. */
export function auditRequest(core: AuditCore, f: Flow): Promise<void> | void {
  const audit = auditHook(core);
  if (!audit) return;
  f.audit = auditEntry(f);
  f.auditor = audit;
  const tel = core.telemetry; // telemetry hook (issue 27)
  return tel ? tel.audit('request', audit.request(f.audit), performance.now()) : audit.request(f.audit);
}

/** Stage audit response: what the client is about to receive (404/204 for an empty reply). */
export function auditResponse(core: AuditCore, f: Flow): Promise<void> | void {
  if (!f.audit) return;
  const tel = core.telemetry; // telemetry hook (issue 27)
  if (tel) return tel.audit('response', Promise.resolve(auditResponseNow(f)), performance.now());
  return auditResponseNow(f);
}

function auditResponseNow(f: Flow): Promise<void> | void {
  if (!f.audit) return;
  const audit = f.auditor!;
  const reply = f.reply;
  if (!reply) return audit.response(f.audit, f.op === 'read' || f.op === 'list' ? 404 : 204, null);
  // A wrapped answer is audited as sent: wrap_info (the token HMAC'd by the device), never the wrapped data.
  if (reply.wrapInfo) return audit.response(f.audit, 200, { data: null, auth: null, wrap_info: reply.wrapInfo });
  return audit.response(f.audit, reply.status ?? 200, { data: reply.data ?? null, auth: reply.auth ?? null });
}

/** A refusal by the ACL is audited too (Vault logs it with "permission denied"), so an operator sees probing. */
export async function refuse(core: AuditCore, f: Flow): Promise<never> {
  const audit = auditHook(core);
  if (audit) {
    const entry = auditEntry(f);
    await audit.request(entry);
    await audit.response(entry, 403, { errors: ['permission denied'] });
  }
  throw denied();
}

/**
 * A missing, unknown or expired token: 403, audited (issue 14 part 7; Vault audits these with
 * "permission denied") so an operator sees probing. The request data is logged only when the route
 * is known (its sensitive fields are then HMACed); for an unknown path nothing of the body is kept.
 */
export async function refuseToken(core: AuditCore, f: Flow): Promise<never> {
  const audit = auditHook(core);
  if (audit) {
    const entry: AuditEntry = {
      requestId: f.requestId,
      operation: f.op,
      path: trimSlashes(f.path),
      remoteAddress: clientAddress(f),
      token: null,
      data: f.route ? f.raw : {},
      sensitive: f.route ? sensitiveOf(f.route) : new Set(),
    };
    await audit.request(entry);
    await audit.response(entry, 403, { errors: ['permission denied'] });
  }
  throw denied();
}

function sensitiveOf(route: AnyRoute): Set<string> {
  const s = new Set<string>();
  for (const [name, field] of Object.entries(route.fields)) if (field.spec.sensitive) s.add(name);
  return s;
}
