/**
 * The headers an engine sees and sets, per its mount's tune (Vault's passthrough_request_headers and
 * allowed_response_headers, vault/router.go): an engine mounted by an operator sees only the request
 * headers its mount passes through, and only the response headers its mount allows reach the client.
 * The system backend (sys/ and what is mounted under it) is keyhold's own code and sees every header,
 * as Vault's system backend does (the wrapping lookup reads the token header).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { MountInfo } from '../framework/context.js';
import { withLateHeaders } from './forward.js';
import type { ResponseSink } from './respond.js';

const NO_HEADERS: IncomingHttpHeaders = Object.freeze({}) as IncomingHttpHeaders;

function isSystem(mount: MountInfo): boolean {
  return mount.path.startsWith('sys/');
}

/** The request headers the engine of `mount` is given (no allocation when the mount passes none). */
export function engineRequestHeaders(mount: MountInfo, headers: IncomingHttpHeaders): IncomingHttpHeaders {
  if (isSystem(mount)) return headers;
  const list = mount.config.passthrough_request_headers;
  if (!Array.isArray(list) || list.length === 0) return NO_HEADERS;
  const out: IncomingHttpHeaders = {};
  for (const name of list) {
    if (typeof name !== 'string') continue;
    const v = headers[name.toLowerCase()];
    if (v !== undefined) out[name.toLowerCase()] = v;
  }
  return out;
}

/** The reply headers of the engine of `mount` that may reach the client, or null when none may. */
export function allowedResponseHeaders(
  mount: MountInfo,
  headers: Record<string, string>,
): Record<string, string> | null {
  if (isSystem(mount)) return headers;
  const list = mount.config.allowed_response_headers;
  if (!Array.isArray(list) || list.length === 0) return null;
  const allowed = new Set(list.map((h) => String(h).toLowerCase()));
  let out: Record<string, string> | null = null;
  for (const [k, v] of Object.entries(headers)) if (allowed.has(k.toLowerCase())) (out ??= {})[k] = v;
  return out;
}

/** The sink to answer through: the same one, or one adding the engine's allowed reply headers. */
export function withEngineHeaders(res: ResponseSink, mount: MountInfo, headers: Record<string, string>): ResponseSink {
  const allowed = allowedResponseHeaders(mount, headers);
  return allowed ? withLateHeaders(res, () => allowed) : res;
}
