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

/** Where the client certificate of a connection comes from, for error messages. */
export interface ClientCertOrigin {
  /** The setting, e.g. `vault.client_cert` or `auto_auth cert client_cert`. */
  setting: string;
  file: string;
}

const CERT_REFUSED_ALERTS =
  /ALERT_(UNKNOWN_CA|BAD_CERTIFICATE|CERTIFICATE_UNKNOWN|UNSUPPORTED_CERTIFICATE|CERTIFICATE_EXPIRED|CERTIFICATE_REVOKED|DECRYPT_ERROR|ACCESS_DENIED)/;
const SERVER_CERT_UNTRUSTED =
  /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_HAS_EXPIRED|CERT_UNTRUSTED|ERR_TLS_CERT_ALTNAME_INVALID)$/;

/**
 * Why a TLS connection failed, in words: a server that requires client certificates ends the
 * connection (TLS 1.3: often with a bare reset right after the handshake) when the certificate is
 * missing or not signed by a CA its listener trusts; the agent cannot tell more than that.
 */
export function describeTlsFailure(
  code: string | undefined,
  message: string,
  handshakeDone: boolean,
  clientCert: ClientCertOrigin | undefined,
): string | undefined {
  const c = code ?? '';
  const which = clientCert ? `the client certificate ${clientCert.file} (${clientCert.setting})` : undefined;
  if (/ALERT_CERTIFICATE_REQUIRED/.test(c) || /alert certificate required/i.test(message))
    return which
      ? `the server requires a client certificate and did not take ${which}`
      : "the server requires a client certificate: set vault.client_cert and vault.client_key (or the cert method's client_cert and client_key)";
  if (CERT_REFUSED_ALERTS.test(c))
    return `the server refused ${which ?? 'the connection'} during the TLS handshake (${c}): is it signed by a CA the listener trusts (tls_client_ca_file), valid now, and meant for client authentication?`;
  if (handshakeDone && which && (c === 'ECONNRESET' || c === 'EPIPE' || /socket hang up/.test(message)))
    return `the server closed the connection right after the TLS handshake: it did not accept ${which}; is it signed by a CA the listener trusts (tls_client_ca_file), valid now, and meant for client authentication? (${c || message})`;
  if (SERVER_CERT_UNTRUSTED.test(c))
    return `the server's TLS certificate is not trusted (${c}): point ca_cert (the vault stanza's, the cert method's, or VAULT_CACERT) at the CA that signed it`;
  return undefined;
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
  /** Where the client certificate comes from (error messages only). */
  private readonly clientCertOrigin?: ClientCertOrigin;

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
    const certFile = settings.clientCert || env.VAULT_CLIENT_CERT;
    if (this.https && certFile)
      this.clientCertOrigin = {
        setting: settings.clientCert ? 'vault.client_cert' : 'VAULT_CLIENT_CERT',
        file: certFile,
      };
    const skip = settings.tlsSkipVerify || ['1', 'true', 't'].includes((env.VAULT_SKIP_VERIFY ?? '').toLowerCase());
    this.base = {
      host: u.hostname.replace(/^\[|\]$/g, ''),
      port: u.port || (this.https ? 443 : 80),
      ...(this.https
        ? {
            rejectUnauthorized: !skip,
            ca: readIf(settings.caCert || env.VAULT_CACERT, 'vault.ca_cert'),
            cert: readIf(certFile, 'vault.client_cert'),
            key: readIf(settings.clientKey || env.VAULT_CLIENT_KEY, 'vault.client_key'),
          }
        : {}),
    };
  }

  /** With a client certificate other than the vault stanza's (cert auto-auth's own client_cert). */
  withClientCert(
    cert: Buffer | undefined,
    key: Buffer | undefined,
    ca: Buffer | undefined,
    origin?: ClientCertOrigin,
  ): Upstream {
    const copy = Object.create(Upstream.prototype) as Upstream;
    Object.assign(copy, this);
    const c = copy as unknown as { base: RequestOptions; clientCertOrigin?: ClientCertOrigin };
    c.base = {
      ...this.base,
      ...(cert ? { cert } : {}),
      ...(key ? { key } : {}),
      ...(ca ? { ca } : {}),
    };
    if (cert && origin) c.clientCertOrigin = origin;
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
      let handshakeDone = false;
      let answered = false;
      const req = fn(
        {
          ...this.base,
          method,
          path,
          signal,
          headers: { ...headers, ...(body ? { 'content-length': String(body.length) } : {}) },
        },
        (res) => {
          answered = true;
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
          );
          res.on('error', (e) => reject(new UnreachableError(this.address, e.message)));
        },
      );
      if (timeoutMs > 0) req.setTimeout(timeoutMs, () => req.destroy(new Error('timed out')));
      if (this.https) req.once('socket', (s) => s.once('secureConnect', () => (handshakeDone = true)));
      req.on('error', (e: NodeJS.ErrnoException) => {
        const tls =
          this.https && !answered
            ? describeTlsFailure(e.code, e.message, handshakeDone, this.clientCertOrigin)
            : undefined;
        reject(new UnreachableError(this.address, tls ?? e.code ?? e.message));
      });
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
