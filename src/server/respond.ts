/** Vault's response envelope and error bodies (reference transit-wire.md section 1.2, 1.3). */
import { goJson } from '../framework/go-json.js';
import type { Reply } from '../framework/route.js';

/** What the answer functions need: node:http's ServerResponse or the fast lane's FastResponse. */
export interface ResponseSink {
  headersSent: boolean;
  writeHead(status: number, headers?: Record<string, string | number>): unknown;
  /** A body given as pieces (Buffer[]) only when `takesParts` is true. */
  end(body?: string | Buffer | readonly Buffer[]): unknown;
  destroy(): unknown;
  /** Whether `end` takes a body as pieces written in order (the fast lane; node:http does not). */
  readonly takesParts?: boolean;
}

const OPEN = Buffer.from('{');
const COMMA = Buffer.from(',');

const HEADERS = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' };

/** Members of the response envelope (a data member of the same name is overridden by it). */
const ENVELOPE_KEYS = [
  'request_id',
  'lease_id',
  'renewable',
  'lease_duration',
  'data',
  'wrap_info',
  'warnings',
  'auth',
  'mount_type',
];

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return (proto === Object.prototype || proto === null) && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
}

/** Send a success envelope; `injectTopLevel` also copies `data`'s keys to the top level (Vault's sys/ answers). */
export function sendReply(
  res: ResponseSink,
  requestId: string,
  reply: Reply,
  mountType: string | undefined,
  status = 200,
  injectTopLevel = false,
): void {
  if (reply.raw) {
    res.writeHead(reply.raw.status ?? 200, { 'Content-Type': reply.raw.contentType, 'Cache-Control': 'no-store' });
    res.end(reply.raw.body);
    return;
  }
  // Only `data`, `warnings` and `auth` vary, so only they are serialised, and `data` once even when
  // it is also copied to the top level (sys/ answers can be large: a destination's associations).
  const data = reply.data;
  const given = data === undefined || data === null ? undefined : reply.dataJson;
  const before = `"request_id":"${requestId}","lease_id":"","renewable":false,"lease_duration":${reply.leaseDuration ?? 0},"data":`;
  const after =
    `,"wrap_info":null,"warnings":${reply.warnings && reply.warnings.length ? goJson(reply.warnings) : 'null'},"auth":${reply.auth === undefined || reply.auth === null ? 'null' : goJson(reply.auth)}` +
    `,"mount_type":${mountType ? goJson(mountType) : '""'}}\n`;
  const copyable = injectTopLevel && isPlainObject(data) && !ENVELOPE_KEYS.some((k) => Object.hasOwn(data, k));
  if (given !== undefined && typeof given !== 'string') {
    // Kept as bytes by the handler: the body is assembled from its pieces, never re-encoded as text.
    const pieces: readonly Buffer[] = Buffer.isBuffer(given) ? [given] : given;
    if (!injectTopLevel) {
      const parts = [Buffer.from('{' + before), ...pieces, Buffer.from(after)];
      let length = 0;
      for (const p of parts) length += p.length;
      res.writeHead(reply.status ?? status, {
        'Content-Type': 'application/json',
        'Cache-Control': 'no-store',
        'Content-Length': length,
      });
      res.end(res.takesParts ? parts : Buffer.concat(parts, length));
      return;
    }
    const whole = Buffer.concat(pieces);
    if (copyable && whole[0] === 0x7b) {
      const inner = whole.length > 2 ? whole.subarray(1, whole.length - 1) : null;
      const body = Buffer.concat(
        inner
          ? [OPEN, inner, COMMA, Buffer.from(before), whole, Buffer.from(after)]
          : [OPEN, Buffer.from(before), whole, Buffer.from(after)],
      );
      res.writeHead(reply.status ?? status, {
        'Content-Type': 'application/json',
        'Cache-Control': 'no-store',
        'Content-Length': body.length,
      });
      res.end(body);
      return;
    }
  }
  const dataJson = data === undefined || data === null ? 'null' : typeof given === 'string' ? given : goJson(data);
  const tail = before + dataJson + after;
  let text: string | null = null;
  if (!injectTopLevel) text = '{' + tail;
  else if (dataJson.startsWith('{') && copyable) {
    // `{...data, ...envelope}` written directly: data's members, then the envelope's.
    const inner = dataJson.slice(1, -1);
    text = '{' + (inner === '' ? '' : inner + ',') + tail;
  }
  if (text !== null) {
    res.writeHead(reply.status ?? status, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
      'Content-Length': Buffer.byteLength(text),
    });
    res.end(text);
    return;
  }
  const envelope = envelopeOf(requestId, reply, mountType);
  const body = data && typeof data === 'object' ? { ...data, ...envelope } : envelope;
  const full = goJson(body) + '\n';
  res.writeHead(reply.status ?? status, { ...HEADERS, 'Content-Length': Buffer.byteLength(full) });
  res.end(full);
}

/** Vault's response envelope of `reply` as an object (without sys/ top-level copies). */
export function envelopeOf(requestId: string, reply: Reply, mountType: string | undefined): Record<string, unknown> {
  return {
    request_id: requestId,
    lease_id: '',
    renewable: false,
    lease_duration: reply.leaseDuration ?? 0,
    data: reply.data ?? null,
    wrap_info: null,
    warnings: reply.warnings && reply.warnings.length ? reply.warnings : null,
    auth: reply.auth ?? null,
    mount_type: mountType ?? '',
  };
}

/** Send `{"errors": [...]}`; `data` (when given) rides along, as Vault's KV 404 does. */
export function sendError(res: ResponseSink, status: number, errors: string[], data?: unknown): void {
  const body: Record<string, unknown> = data === undefined ? { errors } : { request_id: '', data, errors };
  const text = goJson(body) + '\n';
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { ...HEADERS, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** 204 No Content. */
export function sendEmpty(res: ResponseSink): void {
  res.writeHead(204, { 'Cache-Control': 'no-store' });
  res.end();
}
