/**
 * provider-b-kv: Azure Key Vault (reference sync-wire.md 1.5.3 and 3.2). OAuth2 client-credentials
 * token from `<authority>/<tenant>/oauth2/v2.0/token`, cached until shortly before it expires, then
 * the Secrets REST API under `key_vault_uri` with `api-version`. With `identity_token_audience` the
 * client authenticates with keyhold's identity token as a client assertion (a federated credential on
 * the app registration) instead of a client secret.
 */
import { f } from '../../framework/fields.js';
import { invalid } from '../../framework/errors.js';
import { SyncFailure } from '../failure.js';
import { failureOf, jsonOf, ok, type HttpReply } from '../http-client.js';
import {
  baseUrl,
  checkUrlField,
  endpointField,
  tagsOf,
  type Connector,
  type ConnectorDeps,
  type DestinationTypeDef,
} from './common.js';
import type { DestinationRecord } from '../types.js';
import {
  FEDERATION_DEFAULTS,
  FEDERATION_FIELDS,
  checkFederationFields,
  federated,
  federationOf,
  signFor,
} from './federation.js';

/** Key Vault data-plane API version (stable, still served). */
export const AZURE_API_VERSION = '7.4';

/** How long one operation waits for Key Vault's asynchronous delete or recover before the worker's backoff takes over. */
export const TRANSIENT_BUDGET_MS = 30_000;

/** Transient 409 states of a name (innererror codes of Key Vault's soft-delete, issue 19). */
type TransientState = 'deleted' | 'recovering' | 'deleting' | 'conflict';

/** The transient state a 409 reply reports, or null for any other reply. */
function transientState(r: HttpReply): TransientState | null {
  if (r.status !== 409) return null;
  if (/ObjectIsDeletedButRecoverable/i.test(r.text)) return 'deleted';
  if (/ObjectIsBeingRecovered|currently being recovered/i.test(r.text)) return 'recovering';
  if (/ObjectIsBeingDeleted|currently being deleted/i.test(r.text)) return 'deleting';
  return 'conflict';
}

/** Bounded polling with exponential steps (250 ms doubling to 2 s), aborted with the operation. */
class Poller {
  private step = 250;
  private readonly deadline: number;
  constructor(
    private readonly now: () => number,
    private readonly signal: AbortSignal,
  ) {
    this.deadline = now() + TRANSIENT_BUDGET_MS;
  }

  /** Wait one step; past the budget, give up with a retryable failure (the worker backs off and comes back). */
  async pause(what: string, state: string): Promise<void> {
    if (this.now() + this.step > this.deadline) {
      throw new SyncFailure(
        'EXTERNAL_SERVICE_ERROR',
        `${what}: HTTP 409 ${state} still in progress after ${TRANSIENT_BUDGET_MS / 1000} s`,
        { retryable: true, httpStatus: 409, retryAfterMs: 2_000 },
      );
    }
    await sleep(this.step, this.signal);
    this.step = Math.min(2_000, this.step * 2);
  }

  /** Poll `done` until it holds, pausing between polls. */
  async until(what: string, done: () => Promise<boolean>): Promise<void> {
    for (;;) {
      await this.pause(what, 'operation');
      if (await done()) return;
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** `cloud` values: login authority and Key Vault resource of each Azure cloud. */
export const AZURE_CLOUDS: Record<string, { authority: string; resource: string }> = {
  cloud: { authority: 'https://login.microsoftonline.com', resource: 'https://vault.azure.net' },
  azurepublic: { authority: 'https://login.microsoftonline.com', resource: 'https://vault.azure.net' },
  azureusgovernment: { authority: 'https://login.microsoftonline.us', resource: 'https://vault.usgovcloudapi.net' },
  azurechina: { authority: 'https://login.chinacloudapi.cn', resource: 'https://vault.azure.cn' },
};

function azureDetail(b: Record<string, unknown> | null): string {
  const e = (b?.error ?? {}) as { code?: string; message?: string; innererror?: { code?: string } };
  return [e.code, e.innererror?.code, e.message].filter(Boolean).join(' ');
}

class AzureConnector implements Connector {
  private token: { value: string; expiresAt: number } | null = null;
  private readonly base: string;
  private readonly cloud: { authority: string; resource: string };
  constructor(
    private readonly dest: DestinationRecord,
    private readonly deps: ConnectorDeps,
  ) {
    const c = dest.connection;
    this.cloud = AZURE_CLOUDS[String(c.cloud || 'cloud').toLowerCase()] ?? AZURE_CLOUDS.cloud!;
    this.base = baseUrl(c.endpoint_url || c.key_vault_uri, '');
  }

  private pendingToken: Promise<string> | null = null;

  /** A valid access token; concurrent callers share one token request. */
  private async bearer(signal: AbortSignal): Promise<string> {
    if (this.token && this.token.expiresAt > this.deps.now()) return this.token.value;
    this.pendingToken ??= this.fetchToken(signal).finally(() => (this.pendingToken = null));
    return this.pendingToken;
  }

  private async fetchToken(signal: AbortSignal): Promise<string> {
    const now = this.deps.now();
    const c = this.dest.connection;
    const authority = baseUrl(c.authority_host, this.cloud.authority);
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: String(c.client_id),
      scope: `${this.cloud.resource}/.default`,
    });
    if (federated(c)) {
      // Workload identity federation: keyhold's identity token as the client assertion (RFC 7523), no secret.
      form.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      form.set('client_assertion', await signFor(federationOf(this.dest, this.deps)));
    } else form.set('client_secret', String(c.client_secret ?? ''));
    const r = await this.deps.http.send(
      {
        method: 'POST',
        url: `${authority}/${encodeURIComponent(String(c.tenant_id))}/oauth2/v2.0/token`,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        body: form.toString(),
        what: 'token',
      },
      signal,
    );
    if (!ok(r))
      throw failureOf(
        r,
        'token',
        (b) => String(b?.error ?? '') + (b?.error_codes ? ` ${JSON.stringify(b.error_codes)}` : ''),
        now,
      );
    const b = jsonOf(r);
    const value = typeof b?.access_token === 'string' ? b.access_token : '';
    if (!value)
      throw new SyncFailure('EXTERNAL_SERVICE_ERROR', 'token: reply has no access_token', { retryable: true });
    const ttl = Number(b?.expires_in ?? 3600);
    // Renew a minute early (or at half-life for short tokens) so a token never expires mid-request.
    this.token = { value, expiresAt: now + Math.max(0, Math.min(ttl - 60, ttl / 2)) * 1000 };
    return value;
  }

  private async call(
    method: string,
    path: string,
    body: unknown,
    what: string,
    signal: AbortSignal,
  ): Promise<HttpReply> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.bearer(signal);
      const r = await this.deps.http.send(
        {
          method,
          url: `${this.base}${path}?api-version=${AZURE_API_VERSION}`,
          headers: {
            Authorization: `Bearer ${token}`,
            Accept: 'application/json',
            ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          what,
        },
        signal,
      );
      // A revoked or expired token: fetch a fresh one once.
      if (r.status === 401 && attempt === 0) {
        this.token = null;
        continue;
      }
      return r;
    }
  }

  /**
   * Set `name` to `value`. Key Vault is eventually consistent on delete and recover (issue 19;
   * learn.microsoft.com "Azure Key Vault soft-delete overview" and the recover-deleted-secret
   * operation, which completes asynchronously): a name keyhold unsynced is soft-deleted, so a PUT
   * gets 409 ObjectIsDeletedButRecoverable; keyhold recovers it, and until the recovery finishes a
   * PUT gets 409 ObjectIsBeingRecovered; right after a delete, a PUT (or recover) gets 409
   * ObjectIsBeingDeleted. Each of these is waited out by polling the secret (bounded by
   * TRANSIENT_BUDGET_MS), and the PUT always comes last, so the recovered stale value never stays.
   */
  async put(name: string, value: string, signal: AbortSignal): Promise<void> {
    const path = `/secrets/${encodeURIComponent(name)}`;
    const body = { value, tags: tagsOf(this.dest), contentType: 'text/plain' };
    const poll = new Poller(this.deps.now, signal);
    for (;;) {
      const r = await this.call('PUT', path, body, 'set secret', signal);
      if (ok(r)) return;
      const state = transientState(r);
      if (state === 'deleted') {
        // The name is held by a soft-deleted secret (ours, after an unsync): recover it, then set.
        const rec = await this.call(
          'POST',
          `/deletedsecrets/${encodeURIComponent(name)}/recover`,
          undefined,
          'recover secret',
          signal,
        );
        if (ok(rec)) await poll.until('recovery of the soft-deleted secret', () => this.exists(path, signal));
        else if (rec.status === 404)
          continue; // purged meanwhile: the name is free
        else if (rec.status === 409) await poll.pause('recover secret', transientState(rec) ?? 'conflict');
        else throw failureOf(rec, 'recover secret', azureDetail, this.deps.now());
        continue;
      }
      if (state === 'recovering') {
        await poll.until('recovery of the soft-deleted secret', () => this.exists(path, signal));
        continue;
      }
      if (state === 'deleting') {
        await poll.until('deletion of the secret', () =>
          this.exists(`/deletedsecrets/${encodeURIComponent(name)}`, signal),
        );
        continue;
      }
      throw failureOf(r, 'set secret', azureDetail, this.deps.now());
    }
  }

  /** Whether GET `path` answers 200 (404: not yet); other statuses are failures. */
  private async exists(path: string, signal: AbortSignal): Promise<boolean> {
    const r = await this.call('GET', path, undefined, 'poll secret', signal);
    if (ok(r)) return true;
    if (r.status === 404) return false;
    if (r.status === 409) return false;
    throw failureOf(r, 'poll secret', azureDetail, this.deps.now());
  }

  async remove(name: string, signal: AbortSignal): Promise<void> {
    const path = `/secrets/${encodeURIComponent(name)}`;
    const poll = new Poller(this.deps.now, signal);
    for (;;) {
      const r = await this.call('DELETE', path, undefined, 'delete secret', signal);
      if (r.status === 404 || ok(r)) return;
      const state = transientState(r);
      // A secret still being recovered cannot be deleted yet; one being deleted is as good as gone.
      if (state === 'deleting') return;
      if (state === 'recovering') {
        await poll.until('recovery of the soft-deleted secret', () => this.exists(path, signal));
        continue;
      }
      throw failureOf(r, 'delete secret', azureDetail, this.deps.now());
    }
  }

  close(): void {
    this.token = null;
  }
}

/** The provider-b-kv destination type. */
export const providerBKv: DestinationTypeDef = {
  type: 'provider-b-kv',
  provider: 'Azure Key Vault',
  fields: {
    key_vault_uri: f.string('URI of an existing Key Vault, e.g. https://my-vault.vault.azure.net'),
    client_id: f.string('Application (client) id of the app registration'),
    client_secret: f.string('Client secret of the app registration').sensitive(),
    tenant_id: f.string('Directory (tenant) id'),
    cloud: f.string(`Azure cloud: ${Object.keys(AZURE_CLOUDS).join(', ')} (default "cloud", the public cloud)`),
    authority_host: f.string(
      'Replaces the login authority base URL (default per cloud, e.g. https://login.microsoftonline.com)',
    ),
    endpoint_url: endpointField,
    ...FEDERATION_FIELDS,
  },
  required: ['key_vault_uri', 'client_id', 'tenant_id'],
  immutable: ['key_vault_uri', 'tenant_id', 'cloud'],
  defaults: { client_secret: '', cloud: 'cloud', authority_host: '', endpoint_url: '', ...FEDERATION_DEFAULTS },
  defaultGranularity: 'secret-path',
  defaultTemplates: {
    'secret-path': 'vault-{{ .MountAccessor }}-{{ .SecretPath }}',
    'secret-key': 'vault-{{ .MountAccessor }}-{{ .SecretPath }}-{{ .SecretKey }}',
  },
  // learn.microsoft.com Key Vault service limits: 15 tags per secret, names 512 and values 256 characters.
  tagLimits: { max: 15, keyLength: 512, valueLength: 256, source: 'Azure Key Vault' },
  customTags: true,
  check(conn) {
    checkUrlField(conn, 'key_vault_uri');
    checkUrlField(conn, 'authority_host');
    checkUrlField(conn, 'endpoint_url');
    if (!AZURE_CLOUDS[String(conn.cloud || 'cloud').toLowerCase()])
      throw invalid('cloud', `must be one of ${Object.keys(AZURE_CLOUDS).join(', ')}`);
    if (!/^[\w.-]{1,128}$/.test(String(conn.tenant_id))) throw invalid('tenant_id', 'must be a tenant id or domain');
    checkFederationFields(conn);
    // A client secret, or federation (a federated credential on the app registration), not both.
    if (federated(conn) && conn.client_secret)
      throw invalid('client_secret', 'give client_secret or identity_token_audience (federation), not both');
    if (!federated(conn) && !conn.client_secret)
      throw invalid(
        'client_secret',
        'is required (or set identity_token_audience to use a federated credential instead)',
      );
  },
  connect: (dest, deps) => new AzureConnector(dest, deps),
};
