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
  async request(method: string, path: string, body?: unknown, opts: { allowStatus?: number[]; headers?: Record<string, string> } = {}): Promise<ApiResponse> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { 'X-Vault-Request': 'true', ...opts.headers };
    if (this.token) headers['X-Vault-Token'] = this.token;
    // As the vault CLI's kvPreflightVersionRequest: the mount lookups a command makes first are never wrapped.
    if (this.wrapTtl && !(method === 'GET' && /^\/*sys\/(mounts|internal\/ui\/mounts)(\/|\?|$)/.test(path))) headers['X-Vault-Wrap-TTL'] ??= this.wrapTtl;
    if (payload) {
      headers['Content-Type'] ??= 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    const urlPath = '/v1/' + path.replace(/^\/+/, '');
    const env = this.envVars;
    const res = await new Promise<ApiResponse>((resolve, reject) => {
      let req;
      const onRes = (r: import('node:http').IncomingMessage) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => {
          resolve({ status: r.statusCode ?? 0, headers: r.headers, body: parseAnswer(Buffer.concat(chunks).toString('utf8')) });
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
        const fn = u.protocol === 'https:' ? (createRequire(import.meta.url)('node:https') as typeof import('node:https')).request : httpRequest;
        let tls: { rejectUnauthorized: boolean; ca?: Buffer; cert?: Buffer; key?: Buffer; servername?: string } = { rejectUnauthorized: !isTrue(env.KEYHOLD_SKIP_VERIFY) && !isTrue(env.VAULT_SKIP_VERIFY) };
        // CA to verify the server, and a client certificate (TLS client auth, e.g. the cert auth method).
        const files: Array<['ca' | 'cert' | 'key', string | undefined, string]> = [
          ['ca', env.KEYHOLD_CACERT || env.VAULT_CACERT, 'CA certificate'],
          ['cert', env.KEYHOLD_CLIENT_CERT || env.VAULT_CLIENT_CERT, 'client certificate'],
          ['key', env.KEYHOLD_CLIENT_KEY || env.VAULT_CLIENT_KEY, 'client key'],
        ];
        if (u.protocol === 'https:') {
          for (const [k, file, what] of files) {
            if (!file) continue;
            try {
              tls = { ...tls, [k]: readFileSync(file) };
            } catch (e) {
              reject(new LocalError(`cannot read ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`));
              return;
            }
          }
          const sni = env.KEYHOLD_TLS_SERVER_NAME || env.VAULT_TLS_SERVER_NAME;
          if (sni) tls.servername = sni;
        }
        req = fn({ host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port || (u.protocol === 'https:' ? 443 : 80), path: (u.pathname.replace(/\/$/, '') || '') + urlPath, method, headers, ...tls }, onRes);
      }
      req.on('error', (e: NodeJS.ErrnoException) => {
        const why = e.code === 'ENOENT' || e.code === 'ECONNREFUSED' ? 'is the daemon running? start it with `keyhold server`' : e.code === 'EACCES' ? 'permission denied on the socket (it is private to the user running the daemon)' : e.message;
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
