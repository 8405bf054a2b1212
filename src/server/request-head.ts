/** What the request line and headers say: the operation a method asks for, the origin-form target, the token, the path without trailing slashes. */
import type { Operation } from '../framework/route.js';

/** The logical operation of an HTTP method (`list`: the request asked for a listing), or null when unsupported. */
export function methodToOp(method: string, list: boolean): Operation | null {
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

/** Token from `X-Vault-Token`, else `Authorization: Bearer`. */
export function tokenFrom(req: { headers: Record<string, string | string[] | undefined> }): string | undefined {
  const x = req.headers['x-vault-token'];
  if (typeof x === 'string' && x !== '') return x;
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && auth.startsWith('Bearer ')) return auth.slice(7).trim();
  return undefined;
}

/**
 * The origin form (`/v1/...?...`) of a request target. An absolute-form target
 * (`GET http://host:8200/v1/sys/health HTTP/1.1`, RFC 9112 section 3.2.2, sent by clients through a
 * proxy) is served as Go's net/http server serves it to Vault: url.ParseRequestURI takes any
 * `scheme://authority`, and Vault routes on the URL's path alone. The fast lane hands such requests to
 * node:http, which passes the target on unchanged, so this one place serves both lanes.
 */
export function originForm(target: string): string {
  const m = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(target);
  if (!m) return target;
  const rest = target.slice(m[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** `p` without trailing slashes. */
export function trimSlashes(p: string): string {
  let e = p.length;
  while (e > 0 && p.charCodeAt(e - 1) === 0x2f) e--;
  return e === p.length ? p : p.slice(0, e);
}
