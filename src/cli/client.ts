/**
 * HTTP client of the daemon: Unix socket (`unix:///path`) or http(s)://host:port.
 * Address: --address, KEYHOLD_ADDR, VAULT_ADDR, then the default socket.
 * Token: --token, KEYHOLD_TOKEN, VAULT_TOKEN, then the token saved by `keyhold login`.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import { defaultSocket, tokenFile } from '../framework/paths.js';

/** A response from the daemon. */
export interface ApiResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or null for empty bodies. */
  body: Record<string, unknown> | null;
}

/** Error from the server (exit status 2). */
export class ServerError extends Error {
  constructor(
    readonly status: number,
    readonly errors: string[],
    readonly body: Record<string, unknown> | null,
    /** The request, e.g. "GET sys/mounts" (shown after the message). */
    readonly where?: string,
  ) {
    super(errors.length ? errors.join('; ') : status === 404 && where ? `No value found at ${where.replace(/^\S+ /, '')}` : `server answered ${status}`);
  }
}

/** Error before reaching the server or of usage (exit status 1). */
export class LocalError extends Error {}

/** Connection settings. */
export interface ClientOptions {
  address?: string;
  token?: string;
  env?: NodeJS.ProcessEnv;
}

/** Resolve the daemon address from flag, env or default; a bare absolute path means a Unix socket. */
export function resolveAddress(opts: ClientOptions): string {
  const env = opts.env ?? process.env;
  const a = opts.address || env.KEYHOLD_ADDR || env.VAULT_ADDR || `unix://${defaultSocket(env)}`;
  return a.startsWith('/') ? `unix://${a}` : a;
}

/** Resolve the token from flag, env or the login file. */
export function resolveToken(opts: ClientOptions): string | undefined {
  const env = opts.env ?? process.env;
  const t = opts.token || env.KEYHOLD_TOKEN || env.VAULT_TOKEN;
  if (t) return t.trim();
  try {
    return readFileSync(tokenFile(env), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

function isTrue(v: string | undefined): boolean {
  return v !== undefined && ['1', 't', 'true', 'TRUE', 'True'].includes(v);
}

/** A small daemon client. */
export class Client {
  readonly address: string;
  token: string | undefined;
  private readonly envVars: NodeJS.ProcessEnv;
  constructor(opts: ClientOptions = {}) {
    this.address = resolveAddress(opts);
    this.token = resolveToken(opts);
    this.envVars = opts.env ?? process.env;
  }

  /** Send a request to `/v1/<path>`; throws ServerError on >= 400 (unless `allowStatus` includes it). */
  async request(method: string, path: string, body?: unknown, opts: { allowStatus?: number[]; headers?: Record<string, string> } = {}): Promise<ApiResponse> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { 'X-Vault-Request': 'true', ...opts.headers };
    if (this.token) headers['X-Vault-Token'] = this.token;
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
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: Record<string, unknown> | null = null;
          if (text.trim()) {
            try {
              parsed = JSON.parse(text);
            } catch {
              parsed = { errors: [text.trim().slice(0, 200)] };
            }
          }
          resolve({ status: r.statusCode ?? 0, headers: r.headers, body: parsed });
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
        const fn = u.protocol === 'https:' ? httpsRequest : httpRequest;
        let tls: { rejectUnauthorized: boolean; ca?: Buffer } = { rejectUnauthorized: !isTrue(env.KEYHOLD_SKIP_VERIFY) && !isTrue(env.VAULT_SKIP_VERIFY) };
        const caFile = env.KEYHOLD_CACERT || env.VAULT_CACERT;
        if (u.protocol === 'https:' && caFile) {
          try {
            tls = { ...tls, ca: readFileSync(caFile) };
          } catch (e) {
            reject(new LocalError(`cannot read CA certificate ${caFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`));
            return;
          }
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
