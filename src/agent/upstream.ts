/**
 * The agent's connection to the keyhold server (Vault's `vault { }` stanza): a Unix socket or
 * http(s) address, with the CA, client certificate (cert auto-auth) and tls_skip_verify settings.
 * One `send` for raw requests (the API proxy forwards through it) and JSON helpers for the agent's
 * own calls. Tokens travel in headers only, never in URLs or logs.
 */
import { request as httpRequest, type IncomingHttpHeaders, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import type { VaultSettings } from './config.js';

/** A raw answer. */
export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A JSON answer (`body` null when empty or not JSON). */
export interface JsonAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: Vault's JSON bodies are read field by field
  body: any;
}

/** The server cannot be reached (as opposed to an HTTP error answer). */
export class UnreachableError extends Error {
  constructor(address: string, why: string) {
    super(`cannot reach keyhold at ${address}: ${why}`);
    this.name = 'UnreachableError';
  }
}

/** An error answer; `errors` are the server's messages. */
export class UpstreamError extends Error {
  constructor(
    readonly status: number,
    readonly errors: string[],
    what: string,
  ) {
    super(`${what}: ${status}${errors.length ? ` ${errors.join('; ')}` : ''}`);
    this.name = 'UpstreamError';
  }
}

function readIf(file: string | undefined, what: string): Buffer | undefined {
  if (!file) return undefined;
  try {
    return readFileSync(file);
  } catch (e) {
    throw new Error(`cannot read ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

export class Upstream {
  readonly address: string;
  private readonly base: RequestOptions;
  private readonly https: boolean;

  constructor(settings: VaultSettings, env: NodeJS.ProcessEnv = process.env) {
    // As Vault Agent: VAULT_ADDR (or KEYHOLD_ADDR) in the environment overrides vault.address.
    let a = env.KEYHOLD_ADDR || env.VAULT_ADDR || settings.address || '';
    if (!a) throw new Error('vault.address is not set (nor KEYHOLD_ADDR / VAULT_ADDR)');
    if (a.startsWith('/')) a = `unix://${a}`;
    this.address = a;
    if (a.startsWith('unix://')) {
      this.base = { socketPath: a.slice(7) };
      this.https = false;
      return;
    }
    let u: URL;
    try {
      u = new URL(a);
    } catch {
      throw new Error(`vault.address "${a}": use unix:///path or http(s)://host:port`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new Error(`vault.address "${a}": use unix:///path or http(s)://host:port`);
    this.https = u.protocol === 'https:';
    const skip = settings.tlsSkipVerify || ['1', 'true', 't'].includes((env.VAULT_SKIP_VERIFY ?? '').toLowerCase());
    this.base = {
      host: u.hostname.replace(/^\[|\]$/g, ''),
      port: u.port || (this.https ? 443 : 80),
      ...(this.https
        ? {
            rejectUnauthorized: !skip,
            ca: readIf(settings.caCert || env.VAULT_CACERT, 'vault.ca_cert'),
            cert: readIf(settings.clientCert || env.VAULT_CLIENT_CERT, 'vault.client_cert'),
            key: readIf(settings.clientKey || env.VAULT_CLIENT_KEY, 'vault.client_key'),
          }
        : {}),
    };
  }

  /** With a client certificate other than the vault stanza's (cert auto-auth's own client_cert). */
  withClientCert(cert: Buffer | undefined, key: Buffer | undefined, ca: Buffer | undefined): Upstream {
    const copy = Object.create(Upstream.prototype) as Upstream;
    Object.assign(copy, this);
    (copy as unknown as { base: RequestOptions }).base = {
      ...this.base,
      ...(cert ? { cert } : {}),
      ...(key ? { key } : {}),
      ...(ca ? { ca } : {}),
    };
    return copy;
  }

  /** One request; `path` starts with `/v1/...` (query included). */
  send(
    method: string,
    path: string,
    headers: Record<string, string | string[]>,
    body?: Buffer,
    timeoutMs = 0,
    signal?: AbortSignal,
  ): Promise<RawAnswer> {
    return new Promise((resolve, reject) => {
      const fn = this.https ? httpsRequest : httpRequest;
      const req = fn(
        {
          ...this.base,
          method,
          path,
          signal,
          headers: { ...headers, ...(body ? { 'content-length': String(body.length) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
          );
          res.on('error', (e) => reject(new UnreachableError(this.address, e.message)));
        },
      );
      if (timeoutMs > 0) req.setTimeout(timeoutMs, () => req.destroy(new Error('timed out')));
      req.on('error', (e: NodeJS.ErrnoException) => reject(new UnreachableError(this.address, e.code ?? e.message)));
      req.end(body);
    });
  }

  /** A JSON call to `/v1/<path>`; throws UpstreamError on >= 400 unless `allow` lists the status. */
  async json(
    method: string,
    path: string,
    opts: {
      token?: string;
      body?: unknown;
      wrapTtl?: number;
      allow?: number[];
      timeoutMs?: number;
      signal?: AbortSignal;
    } = {},
  ): Promise<JsonAnswer> {
    const headers: Record<string, string> = { 'X-Vault-Request': 'true' };
    if (opts.token) headers['X-Vault-Token'] = opts.token;
    if (opts.wrapTtl) headers['X-Vault-Wrap-TTL'] = `${opts.wrapTtl}s`;
    let payload: Buffer | undefined;
    if (opts.body !== undefined) {
      payload = Buffer.from(JSON.stringify(opts.body));
      headers['Content-Type'] = 'application/json';
    }
    const r = await this.send(method, `/v1/${path.replace(/^\/+/, '')}`, headers, payload, opts.timeoutMs, opts.signal);
    let body: unknown = null;
    if (r.body.length) {
      try {
        body = JSON.parse(r.body.toString('utf8'));
      } catch {
        body = null;
      }
    }
    if (r.status >= 400 && !opts.allow?.includes(r.status)) {
      const errs = Array.isArray((body as { errors?: unknown })?.errors)
        ? ((body as { errors: string[] }).errors as string[])
        : [];
      throw new UpstreamError(r.status, errs, `${method} ${path.replace(/\?.*$/, '')}`);
    }
    return { status: r.status, body };
  }
}
