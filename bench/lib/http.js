/** A small JSON HTTP client for the set-up steps of the benchmark (Unix socket or TCP, keep-alive). */
import { Agent, request } from 'node:http';

const agent = new Agent({ keepAlive: true, maxSockets: 32 });

/**
 * Send `method /v1/<path>` to `target` ({socketPath} or {host, port}) with an optional JSON body
 * and token; resolves {status, body} (body parsed when JSON, else the text).
 */
export function api(target, method, path, body, token) {
  return new Promise((resolve, reject) => {
    const headers = {};
    if (token) headers['X-Vault-Token'] = token;
    let payload;
    if (body !== undefined) {
      payload = Buffer.from(JSON.stringify(body));
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    const req = request({ ...target, agent, method, path: '/v1/' + path.replace(/^\/+/, ''), headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed = text;
        try {
          parsed = text ? JSON.parse(text) : null;
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Like api() but throws unless the status is 2xx; the error names the path and the server's message. */
export async function apiOk(target, method, path, body, token) {
  const r = await api(target, method, path, body, token);
  if (r.status < 200 || r.status > 299) {
    const msg =
      r.body && typeof r.body === 'object' && Array.isArray(r.body.errors)
        ? r.body.errors.join('; ')
        : String(r.body).slice(0, 200);
    const err = new Error(`${method} ${path}: ${r.status} ${msg}`);
    err.status = r.status;
    throw err;
  }
  return r.body;
}

/** Run `fn(i)` for i in [0, n) with at most `limit` in flight; resolves when all are done. */
export async function pool(n, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, n) }, worker));
}

/** Drop idle keep-alive sockets (before stopping a server). */
export function closeIdle() {
  agent.destroy();
}
