/**
 * An HTTPS request to a keyhold TLS listener, trusting the test CA, with an optional client
 * certificate (for cert auth and listeners that require one) and extra headers.
 */
import { request } from 'node:https';
import type { Answer } from './daemon.js';

/** What the certificate options need of an issued certificate (test-pki.ts's Issued). */
interface Pem {
  cert: string;
  key: string;
}

export function tlsRequest(
  baseUrl: string,
  ca: { cert: string },
  method: string,
  path: string,
  body: unknown,
  opts: { client?: Pem; headers?: Record<string, string>; token?: string } = {},
): Promise<Answer> {
  const u = new URL(baseUrl);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        method,
        path: `/v1/${path}`,
        ca: ca.cert,
        ...(opts.client ? { cert: opts.client.cert, key: opts.client.key } : {}),
        headers: {
          ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) } : {}),
          ...(opts.token ? { 'X-Vault-Token': opts.token } : {}),
          ...opts.headers,
        },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = null;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {
            parsed = null;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers, text } as Answer);
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
