/**
 * Request bodies: read with the size limit (413 beyond it), drain an ignored one, parse JSON or a form
 * into the request's data (400 for malformed JSON), as Vault's request handling does.
 */
import type { IncomingMessage } from 'node:http';
import { KeyholdError, invalid } from '../framework/errors.js';
import { JSON_LIMITS_SAFE_LENGTH, jsonLimitViolation } from './json-limits.js';
import { SNAPSHOT_MAGIC } from '../storage/snapshot.js';

const FORM = 'application/x-www-form-urlencoded';

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
  // A snapshot being restored (issue 27) is binary: its handler reads ctx.body.
  if (body[0] === 0x4b && body.subarray(0, SNAPSHOT_MAGIC.length).equals(SNAPSHOT_MAGIC)) return {};
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

/** GET/LIST: the body is ignored, but must be consumed (bounded). */
export async function drain(req: IncomingMessage, limit: number): Promise<Buffer> {
  if (!req.headers['content-length'] && !req.headers['transfer-encoding']) {
    req.resume();
    return Buffer.alloc(0);
  }
  return readBody(req, limit);
}
