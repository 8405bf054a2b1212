/**
 * A failure-injecting reverse proxy (for moto, which cannot be told to fail): forwards every request
 * unchanged (headers included, so SigV4 routing still works) unless a FakeServer failure applies.
 */
import { request } from 'node:http';
import { FakeServer } from './fake-server.js';

/** Proxy to `target` (http://127.0.0.1:PORT). */
export function failingProxy(target: string): FakeServer {
  const t = new URL(target);
  return new FakeServer(
    (r) =>
      new Promise((resolve, reject) => {
        const headers = { ...r.headers };
        delete headers['content-length'];
        const req = request(
          {
            host: t.hostname,
            port: t.port,
            path: r.url.pathname + r.url.search,
            method: r.method,
            headers: { ...headers, 'content-length': String(r.body.length) },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const h: Record<string, string> = {};
              for (const [k, v] of Object.entries(res.headers))
                if (
                  typeof v === 'string' &&
                  !['content-length', 'connection', 'transfer-encoding', 'keep-alive'].includes(k)
                )
                  h[k] = v;
              resolve({ status: res.statusCode ?? 502, text: Buffer.concat(chunks).toString('utf8'), headers: h });
            });
          },
        );
        req.on('error', reject);
        req.end(r.body);
      }),
  );
}
