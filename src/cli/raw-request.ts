/**
 * One HTTP/1.1 request over node:net, for the CLI fast path: loading node:http (its parser, agent
 * and streams) costs a CLI more than the request itself. Unix socket or plain http:// only; the
 * fast path leaves https to the full client. `Connection: close` lets the body run to the end.
 */
import { connect } from 'node:net';
import { LocalError, ServerError, parseAnswer } from './errors.js';

/** POST `body` as JSON to `/v1/<path>`; resolves the parsed JSON answer, throws ServerError on >= 400. */
export function postJson(
  address: string,
  path: string,
  token: string | undefined,
  body: unknown,
): Promise<Record<string, unknown> | null> {
  return rawRequest('POST', address, path, token, body);
}

/** One request to `/v1/<path>` (a JSON body for POST, none for GET); the parsed answer, ServerError on >= 400. */
export function rawRequest(
  method: 'GET' | 'POST',
  address: string,
  path: string,
  token: string | undefined,
  body?: unknown,
): Promise<Record<string, unknown> | null> {
  const payload = method === 'POST' ? Buffer.from(JSON.stringify(body ?? {})) : Buffer.alloc(0);
  let target: { path: string } | { host: string; port: number };
  let host = 'localhost';
  if (address.startsWith('unix://')) target = { path: address.slice(7) };
  else {
    const u = new URL(address);
    host = u.host;
    target = { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || 80) };
  }
  const head =
    `${method} /v1/${path} HTTP/1.1\r\nHost: ${host}\r\nX-Vault-Request: true\r\n` +
    (token ? `X-Vault-Token: ${token}\r\n` : '') +
    (method === 'POST' ? `Content-Type: application/json\r\nContent-Length: ${payload.length}\r\n` : '') +
    `Connection: close\r\n\r\n`;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const sock = connect(target as { path: string });
    // Write without half-closing: `Connection: close` makes the server close once it has answered.
    sock.on('connect', () => sock.write(Buffer.concat([Buffer.from(head, 'latin1'), payload])));
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', (e: NodeJS.ErrnoException) => {
      const why =
        e.code === 'ENOENT' || e.code === 'ECONNREFUSED'
          ? 'is the daemon running? start it with `keyhold server`'
          : e.code === 'EACCES'
            ? 'permission denied on the socket (it is private to the user running the daemon)'
            : e.message;
      reject(new LocalError(`cannot reach keyhold at ${address}: ${why}`));
    });
    sock.on('end', () => {
      const raw = Buffer.concat(chunks);
      const sep = raw.indexOf('\r\n\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(raw.toString('latin1', 0, 16))?.[1] ?? 0);
      if (sep === -1 || !status) return reject(new LocalError(`malformed answer from keyhold at ${address}`));
      const parsed = parseAnswer(raw.toString('utf8', sep + 4));
      if (status >= 400) {
        const errs = Array.isArray(parsed?.errors) ? (parsed!.errors as string[]) : [];
        return reject(new ServerError(status, errs, parsed, `${method} ${path}`));
      }
      resolve(parsed);
    });
  });
}
