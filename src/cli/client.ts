/**
 * HTTP client of the daemon: Unix socket (`unix:///path`) or http(s)://host:port.
 * Address: --address, KEYHOLD_ADDR, VAULT_ADDR, then the default socket.
 * Token: --token, KEYHOLD_TOKEN, VAULT_TOKEN, then the token saved by `keyhold login`.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { LocalError, ServerError, parseAnswer } from './errors.js';
import { resolveAddress, resolveToken, isTrue, type ClientOptions } from './settings.js';

/** A response from the daemon. */
export interface ApiResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or null for empty bodies. */
  body: Record<string, unknown> | null;
}

export { ServerError, LocalError } from './errors.js';
export { resolveAddress, resolveToken, type ClientOptions } from './settings.js';

/** A small daemon client. */
export class Client {
  readonly address: string;
  token: string | undefined;
  /** X-Vault-Wrap-TTL sent with every request (the CLI's -wrap-ttl, env VAULT_WRAP_TTL). */
  wrapTtl: string | undefined;
  private readonly envVars: NodeJS.ProcessEnv;
  constructor(opts: ClientOptions = {}) {
    this.address = resolveAddress(opts);
    this.token = resolveToken(opts);
    this.envVars = opts.env ?? process.env;
    this.wrapTtl = opts.wrapTtl || this.envVars.VAULT_WRAP_TTL || undefined;
  }

  /** Send a request to `/v1/<path>`; throws ServerError on >= 400 (unless `allowStatus` includes it). */
  async request(
    method: string,
    path: string,
    body?: unknown,
    opts: { allowStatus?: number[]; headers?: Record<string, string>; onChunk?: (chunk: Buffer) => void } = {},
  ): Promise<ApiResponse> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { 'X-Vault-Request': 'true', ...opts.headers };
    if (this.token) headers['X-Vault-Token'] = this.token;
    // As the vault CLI's kvPreflightVersionRequest: the mount lookups a command makes first are never wrapped.
    if (this.wrapTtl && !(method === 'GET' && /^\/*sys\/(mounts|internal\/ui\/mounts)(\/|\?|$)/.test(path)))
      headers['X-Vault-Wrap-TTL'] ??= this.wrapTtl;
    if (payload) {
      headers['Content-Type'] ??= 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    const urlPath = '/v1/' + path.replace(/^\/+/, '');
    const env = this.envVars;
    const res = await new Promise<ApiResponse>((resolve, reject) => {
      let req;
      const onRes = (r: import('node:http').IncomingMessage) => {
        // A streamed answer (sys/monitor): each chunk goes to the caller as it arrives.
        if (opts.onChunk && (r.statusCode ?? 0) < 400) {
          r.on('data', opts.onChunk);
          r.on('end', () => resolve({ status: r.statusCode ?? 0, headers: r.headers, body: null }));
          r.on('error', reject);
          return;
        }
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => {
          resolve({
            status: r.statusCode ?? 0,
            headers: r.headers,
            body: parseAnswer(Buffer.concat(chunks).toString('utf8')),
          });
        });
        r.on('error', reject);
      };
      if (this.address.startsWith('unix://')) {
        req = httpRequest({ socketPath: this.address.slice(7), path: urlPath, method, headers }, onRes);
      } else {
        let u: URL;
        try {
          u = new URL(this.address);
        } catch {
          reject(new LocalError(`invalid address "${this.address}": use unix:///path or http(s)://host:port`));
          return;
        }
        if (u.protocol !== 'http:' && u.protocol !== 'https:') {
          reject(new LocalError(`invalid address "${this.address}": use unix:///path or http(s)://host:port`));
          return;
        }
        // node:https (and TLS) load only for https addresses: most calls go over the Unix socket.
        const fn =
          u.protocol === 'https:'
            ? (createRequire(import.meta.url)('node:https') as typeof import('node:https')).request
            : httpRequest;
        let tls: { rejectUnauthorized: boolean; ca?: Buffer; cert?: Buffer; key?: Buffer; servername?: string } = {
          rejectUnauthorized: !isTrue(env.KEYHOLD_SKIP_VERIFY) && !isTrue(env.VAULT_SKIP_VERIFY),
        };
        const caFile = env.KEYHOLD_CACERT || env.VAULT_CACERT;
        if (u.protocol === 'https:' && caFile) {
          try {
            tls = { ...tls, ca: readFileSync(caFile) };
          } catch (e) {
            reject(
              new LocalError(
                `cannot read CA certificate ${caFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
              ),
            );
            return;
          }
        }
        if (u.protocol === 'https:') {
          // -tls-server-name / VAULT_TLS_SERVER_NAME: the name the certificate is checked against (SNI).
          const sni = env.KEYHOLD_TLS_SERVER_NAME || env.VAULT_TLS_SERVER_NAME;
          if (sni) tls.servername = sni;
          // The vault CLI's VAULT_CLIENT_CERT / VAULT_CLIENT_KEY: a TLS client certificate (the cert auth method).
          const certFile = env.KEYHOLD_CLIENT_CERT || env.VAULT_CLIENT_CERT;
          const keyFile = env.KEYHOLD_CLIENT_KEY || env.VAULT_CLIENT_KEY;
          if (certFile || keyFile) {
            if (!certFile || !keyFile) {
              reject(
                new LocalError(
                  'a client certificate needs both VAULT_CLIENT_CERT and VAULT_CLIENT_KEY (-client-cert and -client-key)',
                ),
              );
              return;
            }
            try {
              tls = { ...tls, cert: readFileSync(certFile), key: readFileSync(keyFile) };
            } catch (e) {
              reject(
                new LocalError(
                  `cannot read client certificate or key: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
                ),
              );
              return;
            }
          }
        }
        req = fn(
          {
            host: u.hostname.replace(/^\[|\]$/g, ''),
            port: u.port || (u.protocol === 'https:' ? 443 : 80),
            path: (u.pathname.replace(/\/$/, '') || '') + urlPath,
            method,
            headers,
            ...tls,
          },
          onRes,
        );
      }
      req.on('error', (e: NodeJS.ErrnoException) => {
        const why =
          e.code === 'ENOENT' || e.code === 'ECONNREFUSED'
            ? 'is the daemon running? start it with `keyhold server`'
            : e.code === 'EACCES'
              ? 'permission denied on the socket (it is private to the user running the daemon)'
              : e.message;
        reject(new LocalError(`cannot reach keyhold at ${this.address}: ${why}`));
      });
      if (payload) req.end(payload);
      else req.end();
    });
    if (res.status >= 400 && !opts.allowStatus?.includes(res.status)) {
      const errs = Array.isArray(res.body?.errors) ? (res.body!.errors as string[]) : [];
      throw new ServerError(res.status, errs, res.body, `${method} ${path.replace(/^\/+/, '').replace(/\?.*$/, '')}`);
    }
    return res;
  }

  read(path: string, query?: Record<string, string>): Promise<ApiResponse> {
    const qs = query && Object.keys(query).length ? '?' + new URLSearchParams(query).toString() : '';
    return this.request('GET', path + qs);
  }
  write(path: string, body: unknown): Promise<ApiResponse> {
    return this.request('POST', path, body);
  }
  list(path: string): Promise<ApiResponse> {
    return this.request('LIST', path);
  }
  delete(path: string, query?: Record<string, string>): Promise<ApiResponse> {
    const qs = query && Object.keys(query).length ? '?' + new URLSearchParams(query).toString() : '';
    return this.request('DELETE', path + qs);
  }
}
