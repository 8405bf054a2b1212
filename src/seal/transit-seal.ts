/**
 * `seal "transit"`: the master key is wrapped by a transit key of another keyhold or Vault.
 * Behaves as Vault's wrapper (go-kms-wrapping wrappers/transit): encrypt writes base64 `plaintext`
 * to `<mount>/encrypt/<key>`, decrypt writes `ciphertext` to `<mount>/decrypt/<key>`; a ciphertext
 * must have three `:`-separated parts (`vault:vN:...`) and its key id is `key_id_prefix` + `vN`;
 * the token is renewed (renew-self once at setup, then before it expires) unless `disable_renewal`.
 * Parameters and their environment variables: docs/seal.md (Vault's table).
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from '../framework/context.js';
import type { SealBlob } from './seal.js';
import type { SealWrapper } from './wrapper.js';

/** Resolved transit seal settings (after environment and defaults). */
export interface TransitSealSettings {
  address: string;
  token: string;
  keyName: string;
  mountPath: string;
  namespace: string;
  disableRenewal: boolean;
  keyIdPrefix: string;
  tls: { caCert?: string; clientCert?: string; clientKey?: string; serverName?: string; skipVerify: boolean };
}

/** Per-call deadline: a seal server that hangs must not hang unseal forever. */
const TIMEOUT_MS = 10_000;

/** A transit seal client. */
export class TransitSeal implements SealWrapper {
  readonly type = 'transit';
  private renewTimer: NodeJS.Timeout | null = null;
  private setUp = false;

  constructor(
    private readonly s: TransitSealSettings,
    private readonly logger: Logger,
  ) {}

  /** Renew the token once (failure only turns renewal off, as Vault's wrapper) and check encryption works. */
  async init(): Promise<void> {
    await this.setup();
    await this.encrypt(Buffer.from('a'));
  }

  private async setup(): Promise<void> {
    if (this.setUp) return;
    this.setUp = true;
    if (this.s.disableRenewal) return;
    await this.renew();
  }

  private async renew(): Promise<void> {
    try {
      const r = await this.call('POST', 'auth/token/renew-self', {});
      const auth = (r.auth ?? {}) as { renewable?: boolean; lease_duration?: number };
      if (auth.renewable && (auth.lease_duration ?? 0) > 0) {
        // Renew at two thirds of the lease, as Vault's lifetime watcher roughly does.
        this.renewTimer = setTimeout(() => void this.renew(), Math.max(1, auth.lease_duration! * 667));
        this.renewTimer.unref();
      }
    } catch (e) {
      this.logger.warn('transit seal: token renewal failed; renewal disabled', { reason: (e as Error).message });
    }
  }

  async encrypt(plaintext: Buffer): Promise<SealBlob> {
    await this.setup();
    const r = await this.call('POST', `${this.s.mountPath}/encrypt/${encodeURIComponent(this.s.keyName)}`, {
      plaintext: plaintext.toString('base64'),
    });
    const ct = (r.data as { ciphertext?: unknown } | undefined)?.ciphertext;
    if (typeof ct !== 'string') throw new Error('transit seal: encrypt returned no ciphertext');
    const parts = ct.split(':');
    if (parts.length !== 3) throw new Error('transit seal: invalid ciphertext returned');
    return { seal_type: this.type, key_id: this.s.keyIdPrefix + parts[1], ciphertext: ct };
  }

  async decrypt(blob: SealBlob): Promise<Buffer> {
    await this.setup();
    const r = await this.call('POST', `${this.s.mountPath}/decrypt/${encodeURIComponent(this.s.keyName)}`, {
      ciphertext: blob.ciphertext,
    });
    const pt = (r.data as { plaintext?: unknown } | undefined)?.plaintext;
    if (typeof pt !== 'string') throw new Error('transit seal: decrypt returned no plaintext');
    return Buffer.from(pt, 'base64');
  }

  async close(): Promise<void> {
    if (this.renewTimer) clearTimeout(this.renewTimer);
    this.renewTimer = null;
  }

  /** One API call; errors name the address and the server's errors, never the token or the key. */
  private call(method: string, path: string, body: unknown): Promise<Record<string, unknown>> {
    const addr = this.s.address;
    const payload = Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = {
      'X-Vault-Token': this.s.token,
      'Content-Type': 'application/json',
      'Content-Length': String(payload.length),
    };
    if (this.s.namespace) headers['X-Vault-Namespace'] = this.s.namespace;
    let opts: RequestOptions & Record<string, unknown>;
    let send = httpRequest;
    if (addr.startsWith('unix://')) {
      opts = { socketPath: addr.slice('unix://'.length), path: `/v1/${path}`, method, headers };
    } else {
      const u = new URL(addr);
      const base = u.pathname.replace(/\/+$/, '');
      opts = {
        host: u.hostname,
        port: u.port || (u.protocol === 'https:' ? 443 : 80),
        path: `${base}/v1/${path}`,
        method,
        headers,
      };
      if (u.protocol === 'https:') {
        send = httpsRequest;
        const t = this.s.tls;
        if (t.caCert) opts.ca = readFileSync(t.caCert);
        if (t.clientCert) opts.cert = readFileSync(t.clientCert);
        if (t.clientKey) opts.key = readFileSync(t.clientKey);
        if (t.serverName) opts.servername = t.serverName;
        opts.rejectUnauthorized = !t.skipVerify;
      }
    }
    return new Promise((resolve, reject) => {
      const req = send(opts, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: Record<string, unknown> = {};
          try {
            json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
          } catch {
            // fall through with an empty body: the status says what happened
          }
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) return resolve(json);
          const errs = Array.isArray(json.errors)
            ? (json.errors as unknown[]).map(String).join('; ')
            : text.slice(0, 200);
          reject(new Error(`transit seal: ${method} ${path} at ${addr} answered ${status}${errs ? `: ${errs}` : ''}`));
        });
        res.on('error', reject);
      });
      req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
      req.on('error', (e) => reject(new Error(`transit seal: cannot reach ${addr}: ${e.message}`)));
      req.end(payload);
    });
  }
}
