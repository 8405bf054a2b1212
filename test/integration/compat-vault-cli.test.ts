/**
 * Vault-client compatibility: the vault CLI (Go) is not installable here, so these tests replay, as raw
 * HTTP over TCP, what hashicorp/vault's command/ and api/ packages send and check what they decode:
 *
 * - api/client.go, api/request.go: X-Vault-Token and X-Vault-Request: true on every call, JSON bodies
 *   without a Content-Type, Logical().Write = PUT, Logical().List = GET ?list=true, Read = GET,
 *   Delete = DELETE; a 404 on Read/List parses the body and yields nil unless it carries data/warnings.
 * - api/secret.go ParseSecret: typed decoding (strings, ints, bools, []string) of the envelope and of
 *   `auth`; a field of the wrong JSON type is a decode error in Go, so the helpers below reject it too.
 * - command/kv_helpers.go: every `vault kv` command first reads sys/internal/ui/mounts/<path> to learn
 *   the mount path and options.version, then rewrites `secret/foo` to `secret/data/foo` (or metadata/).
 * - command/status.go (sys/seal-status + sys/leader), command/login.go with the token method
 *   (auth/token/lookup-self), command/token_*.go, command/secrets_{list,enable,disable}.go
 *   (api/sys_mounts.go: MountInput body, MountOutput decoded with mapstructure).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;

interface GoAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** A request shaped like hashicorp/vault api's: no Content-Type, compact JSON body, Vault headers. */
function goReq(
  method: string,
  path: string,
  body?: unknown,
  opts: { token?: string | null; headers?: Record<string, string>; base?: string } = {},
): Promise<GoAnswer> {
  const u = new URL(opts.base ?? d.tcp!);
  const headers: Record<string, string> = {
    'X-Vault-Request': 'true',
    'User-Agent': 'Go-http-client/1.1',
    ...opts.headers,
  };
  const token = opts.token === undefined ? 'root' : opts.token;
  if (token) headers['X-Vault-Token'] = token;
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  if (payload) headers['Content-Length'] = String(payload.length);
  return new Promise((res, rej) => {
    const r = request({ host: u.hostname, port: u.port, method, path: '/v1/' + path, headers }, (resp) => {
      const chunks: Buffer[] = [];
      resp.on('data', (c: Buffer) => chunks.push(c));
      resp.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown = null;
        try {
          json = text ? JSON.parse(text) : null;
        } catch {
          json = undefined;
        }
        res({ status: resp.statusCode ?? 0, headers: resp.headers, text, json });
      });
    });
    r.on('error', rej);
    r.end(payload);
  });
}

const isInt = (v: unknown) => typeof v === 'number' && Number.isInteger(v);
const isStr = (v: unknown) => typeof v === 'string';
const isBool = (v: unknown) => typeof v === 'boolean';
const isStrList = (v: unknown) => Array.isArray(v) && v.every(isStr);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Fail like Go's typed json decoding would: `field` present with a value of another JSON type. */
function typed(obj: Record<string, unknown>, spec: Record<string, (v: unknown) => boolean>, where: string): void {
  for (const [k, ok] of Object.entries(spec)) {
    if (obj[k] === undefined || obj[k] === null) continue;
    if (!ok(obj[k])) throw new Error(`${where}.${k}: Go cannot decode ${JSON.stringify(obj[k])}`);
  }
}

/** api.ParseSecret + the Secret struct's field types. Returns the secret. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function parseSecret(text: string): any {
  const s = JSON.parse(text) as Record<string, unknown>;
  typed(
    s,
    {
      request_id: isStr,
      lease_id: isStr,
      lease_duration: isInt,
      renewable: isBool,
      data: isObj,
      warnings: isStrList,
      auth: isObj,
      wrap_info: isObj,
      mount_type: isStr,
    },
    'secret',
  );
  if (isObj(s.auth)) {
    typed(
      s.auth,
      {
        client_token: isStr,
        accessor: isStr,
        policies: isStrList,
        token_policies: isStrList,
        identity_policies: isStrList,
        metadata: (v) => isObj(v) && Object.values(v).every(isStr),
        orphan: isBool,
        entity_id: isStr,
        lease_duration: isInt,
        renewable: isBool,
        token_type: isStr,
        num_uses: isInt,
      },
      'auth',
    );
  }
  return s;
}

/** api Logical().Read/List: nil on a 404 whose body has neither data nor warnings. */
function logicalResult(a: GoAnswer) {
  if (a.status === 404) {
    const s = parseSecret(a.text);
    return s.data && Object.keys(s.data).length ? s : s.warnings?.length ? s : null;
  }
  if (a.status >= 400)
    throw new Error(`Error making API request. Code: ${a.status}. Errors: ${goErrors(a).join('; ')}`);
  return a.status === 204 ? null : parseSecret(a.text);
}

/** api.Response.Error: the body must decode as {"errors": [string]}. */
function goErrors(a: GoAnswer): string[] {
  expect(a.headers['content-type']).toBe('application/json');
  expect(isObj(a.json) && isStrList(a.json.errors)).toBe(true);
  return a.json.errors;
}

/** mapstructure.Decode into api.MountOutput (no weak typing). */
function decodeMountOutput(path: string, m: unknown): void {
  if (!isObj(m)) throw new Error(`${path}: not an object`);
  typed(
    m,
    {
      uuid: isStr,
      type: isStr,
      description: isStr,
      accessor: isStr,
      config: isObj,
      options: (v) => isObj(v) && Object.values(v).every(isStr),
      local: isBool,
      seal_wrap: isBool,
      external_entropy_access: isBool,
      plugin_version: isStr,
      running_plugin_version: isStr,
      running_sha256: isStr,
      deprecation_status: isStr,
    },
    path,
  );
  if (isObj(m.config)) {
    typed(
      m.config,
      {
        default_lease_ttl: isInt,
        max_lease_ttl: isInt,
        force_no_cache: isBool,
        audit_non_hmac_request_keys: isStrList,
        audit_non_hmac_response_keys: isStrList,
        listing_visibility: isStr,
        passthrough_request_headers: isStrList,
        allowed_response_headers: isStrList,
        token_type: isStr,
        allowed_managed_keys: isStrList,
        identity_token_key: isStr,
        plugin_name: isStr,
      },
      `${path}.config`,
    );
  }
}

/** command/kv_helpers.go kvPreflightVersionRequest + addPrefixToKVPath. */
async function kvPreflight(path: string, token = 'root'): Promise<{ mountPath: string; version: number }> {
  const a = await goReq('GET', 'sys/internal/ui/mounts/' + path, undefined, { token });
  if (a.status === 404) return { mountPath: '', version: 1 };
  if (a.status !== 200) throw new Error(`preflight ${a.status}: ${goErrors(a).join('; ')}`);
  const s = parseSecret(a.text);
  const mountPath = s.data.path as string;
  const options = s.data.options as Record<string, string> | null;
  return { mountPath, version: options?.version === '2' ? 2 : 1 };
}
function addPrefix(p: string, mountPath: string, apiPrefix: string): string {
  if (p === mountPath || p === mountPath.replace(/\/$/, '')) return mountPath.replace(/\/$/, '') + '/' + apiPrefix;
  return [mountPath.replace(/\/$/, ''), apiPrefix, p.slice(mountPath.length)]
    .filter(Boolean)
    .join('/')
    .replace(/\/+$/, '');
}

/** `vault kv <cmd> <path>`: preflight, then the rewritten v2 path. */
async function kvPath(
  path: string,
  apiPrefix: 'data' | 'metadata' | 'delete' | 'undelete' | 'destroy',
  token = 'root',
): Promise<string> {
  const { mountPath, version } = await kvPreflight(path, token);
  expect(version).toBe(2);
  return addPrefix(path, mountPath, apiPrefix);
}

beforeAll(async () => {
  d = await startDaemon({ tcp: true });
});
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

describe('response envelope and errors as Vault clients read them', () => {
  it('wraps a read in the full envelope with a fresh UUID request_id per request', async () => {
    await goReq('PUT', 'transit/keys/env-k', {});
    const [a, b] = await Promise.all([goReq('GET', 'transit/keys/env-k'), goReq('GET', 'transit/keys/env-k')]);
    expect(a.status).toBe(200);
    expect(a.headers['content-type']).toBe('application/json');
    const s = parseSecret(a.text);
    expect(Object.keys(s)).toEqual(
      expect.arrayContaining([
        'request_id',
        'lease_id',
        'renewable',
        'lease_duration',
        'data',
        'wrap_info',
        'warnings',
        'auth',
      ]),
    );
    expect(s).toMatchObject({
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      wrap_info: null,
      warnings: null,
      auth: null,
    });
    expect(s.request_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(parseSecret(b.text).request_id).not.toBe(s.request_id);
  });

  it('answers an empty success with 204 and no body', async () => {
    const a = await goReq('PUT', 'sys/policies/acl/env-pol', { policy: 'path "secret/*" { capabilities = ["read"] }' });
    expect(a.status).toBe(204);
    expect(a.text).toBe('');
    expect(logicalResult(a)).toBeNull();
  });

  it('answers a missing read and an empty list with 404 {"errors":[]}, which Logical().Read/List turn into nil', async () => {
    const read = await goReq('GET', 'transit/keys/nope');
    expect(read.status).toBe(404);
    expect(read.json).toEqual({ errors: [] });
    expect(read.headers['content-type']).toBe('application/json');
    expect(logicalResult(read)).toBeNull();
    const list = await goReq('GET', 'secret/metadata/none/here?list=true');
    expect(list.status).toBe(404);
    expect(list.json).toEqual({ errors: [] });
    expect(logicalResult(list)).toBeNull();
  });

  it('gives {"errors":[string]} with application/json for 400, 403 and 405', async () => {
    const bad = await goReq('PUT', 'transit/encrypt/env-k', { plaintext: '%%%not base64' });
    expect(bad.status).toBe(400);
    expect(goErrors(bad)).toHaveLength(1);
    const denied = await goReq('GET', 'transit/keys/env-k', undefined, { token: null });
    expect(denied.status).toBe(403);
    expect(goErrors(denied).join(' ')).toMatch(/permission denied/);
    const verb = await goReq('PUT', 'transit/keys');
    expect(verb.status).toBe(405);
    expect(goErrors(verb)).toHaveLength(1);
  });

  it('accepts the token in X-Vault-Token or Authorization: Bearer; X-Vault-Token wins', async () => {
    const bearer = await goReq('GET', 'auth/token/lookup-self', undefined, {
      token: null,
      headers: { Authorization: 'Bearer root' },
    });
    expect(bearer.status).toBe(200);
    expect(parseSecret(bearer.text).data.id).toBe('root');
    const both = await goReq('GET', 'auth/token/lookup-self', undefined, {
      token: 'root',
      headers: { Authorization: 'Bearer not-a-token' },
    });
    expect(both.status).toBe(200);
    const wrongFirst = await goReq('GET', 'auth/token/lookup-self', undefined, {
      token: 'not-a-token',
      headers: { Authorization: 'Bearer root' },
    });
    expect(wrongFirst.status).toBe(403);
  });

  it('reports unknown parameters as a string warning and still succeeds', async () => {
    const a = await goReq('PUT', 'transit/encrypt/env-k', { plaintext: Buffer.from('x').toString('base64'), bogus: 1 });
    expect(a.status).toBe(200);
    const s = parseSecret(a.text);
    expect(s.warnings).toEqual(['Endpoint ignored these unrecognized parameters: [bogus]']);
  });

  it('wraps the answer when X-Vault-Wrap-TTL is sent: wrap_info as api.SecretWrapInfo reads it, data withheld, unwrapped once', async () => {
    // Vault (http/logical.go, vault/wrapping.go): the response is replaced by a single-use wrapping token.
    const a = await goReq('PUT', 'transit/random/16', {}, { headers: { 'X-Vault-Wrap-TTL': '60s' } });
    expect(a.status).toBe(200);
    const s = parseSecret(a.text);
    expect(s.data).toBeNull();
    expect(a.text).not.toMatch(/random_bytes/);
    expect(s.wrap_info).toMatchObject({ ttl: 60, creation_path: 'transit/random/16' });
    expect(s.wrap_info.token).toMatch(/\S/);
    const u = await goReq('PUT', 'sys/wrapping/unwrap', { token: s.wrap_info.token });
    expect(u.status).toBe(200);
    expect(parseSecret(u.text).data.random_bytes).toMatch(/\S/);
    const again = await goReq('PUT', 'sys/wrapping/unwrap', { token: s.wrap_info.token });
    expect(again.status).toBe(400);
  });

  it('returns a typed auth block from token create (vault token create)', async () => {
    // command/token_create.go -> api TokenCreateRequest: omitempty fields dropped, display_name/num_uses/type/entity_alias always sent.
    const a = await goReq('POST', 'auth/token/create', {
      policies: ['default'],
      ttl: '1h',
      display_name: '',
      num_uses: 0,
      renewable: true,
      type: 'service',
      entity_alias: '',
    });
    expect(a.status).toBe(200);
    const s = parseSecret(a.text);
    expect(s.data).toBeNull();
    expect(s.auth).toMatchObject({
      policies: ['default'],
      token_policies: ['default'],
      lease_duration: 3600,
      renewable: true,
      orphan: false,
      token_type: 'service',
    });
    expect(s.auth.client_token).toMatch(/\S/);
  });
});

describe('vault status, login and token lookup', () => {
  it('status: seal-status and leader decode into the Go structs', async () => {
    const ss = await goReq('GET', 'sys/seal-status', undefined, { token: null });
    expect(ss.status).toBe(200);
    typed(
      ss.json,
      {
        type: isStr,
        initialized: isBool,
        sealed: isBool,
        t: isInt,
        n: isInt,
        progress: isInt,
        nonce: isStr,
        version: isStr,
        build_date: isStr,
        migration: isBool,
        cluster_name: isStr,
        cluster_id: isStr,
        recovery_seal: isBool,
        storage_type: isStr,
        warnings: isStrList,
      },
      'seal-status',
    );
    expect(ss.json).toMatchObject({ initialized: true, sealed: false });
    const leader = await goReq('GET', 'sys/leader');
    expect(leader.status).toBe(200);
    typed(
      leader.json,
      {
        ha_enabled: isBool,
        is_self: isBool,
        leader_address: isStr,
        leader_cluster_address: isStr,
        performance_standby: isBool,
        performance_standby_last_remote_wal: isInt,
        active_time: isStr,
      },
      'leader',
    );
    expect(Number.isNaN(Date.parse(leader.json.active_time))).toBe(false);
  });

  it('login with a token: lookup-self carries what the token CLI handler reads', async () => {
    const created = parseSecret(
      (
        await goReq('POST', 'auth/token/create', {
          policies: ['env-pol'],
          ttl: '30m',
          meta: { who: 'cli' },
          display_name: 'cli',
          num_uses: 0,
          type: 'service',
          entity_alias: '',
        })
      ).text,
    );
    const tok = created.auth.client_token as string;
    const a = await goReq('GET', 'auth/token/lookup-self', undefined, { token: tok });
    expect(a.status).toBe(200);
    const s = parseSecret(a.text);
    // api/secret.go TokenID/TokenAccessor/TokenPolicies/TokenTTL/TokenIsRenewable/TokenMetadata.
    typed(
      s.data,
      {
        id: isStr,
        accessor: isStr,
        policies: isStrList,
        identity_policies: isStrList,
        ttl: isInt,
        renewable: isBool,
        meta: isObj,
        entity_id: isStr,
        display_name: isStr,
        num_uses: isInt,
        orphan: isBool,
        creation_ttl: isInt,
        creation_time: isInt,
        explicit_max_ttl: isInt,
        path: isStr,
        type: isStr,
      },
      'lookup',
    );
    expect(s.data).toMatchObject({
      id: tok,
      accessor: created.auth.accessor,
      policies: ['default', 'env-pol'],
      renewable: true,
      meta: { who: 'cli' },
      display_name: 'token-cli',
    });
    expect(s.data.ttl).toBeGreaterThan(1700);
    expect(s.data.expire_time).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('token lookup <token> posts the token in the body; -accessor uses lookup-accessor', async () => {
    const created = parseSecret(
      (
        await goReq('POST', 'auth/token/create', {
          policies: ['default'],
          display_name: 'x',
          num_uses: 0,
          type: 'service',
          entity_alias: '',
        })
      ).text,
    );
    const look = parseSecret((await goReq('POST', 'auth/token/lookup', { token: created.auth.client_token })).text);
    expect(look.data.id).toBe(created.auth.client_token);
    const acc = parseSecret(
      (await goReq('POST', 'auth/token/lookup-accessor', { accessor: created.auth.accessor })).text,
    );
    expect(acc.data.accessor).toBe(created.auth.accessor);
    expect(acc.data.id).toBe('');
  });

  it('token create with an empty display_name (as `vault token create` sends) is named "token"', async () => {
    // hashicorp/vault vault/token_store.go: the "token-" prefix is only added when display_name is non-empty.
    const created = parseSecret(
      (await goReq('POST', 'auth/token/create', { display_name: '', num_uses: 0, type: 'service', entity_alias: '' }))
        .text,
    );
    const look = parseSecret((await goReq('POST', 'auth/token/lookup', { token: created.auth.client_token })).text);
    expect(look.data.display_name).toBe('token');
  });
});

describe('vault policy, token capabilities, auth list', () => {
  it('policy write/read/list/delete through sys/policies/acl (api/sys_policy.go)', async () => {
    const hcl = 'path "transit/encrypt/*" {\n  capabilities = ["update"]\n}\n';
    expect((await goReq('PUT', 'sys/policies/acl/cli-pol', { policy: hcl })).status).toBe(204);
    const r = logicalResult(await goReq('GET', 'sys/policies/acl/cli-pol'));
    expect(r.data).toEqual({ name: 'cli-pol', policy: hcl });
    const l = logicalResult(await goReq('GET', 'sys/policies/acl?list=true'));
    expect(l.data.keys).toEqual(expect.arrayContaining(['cli-pol', 'default', 'root']));
    expect((await goReq('DELETE', 'sys/policies/acl/cli-pol')).status).toBe(204);
    expect(logicalResult(await goReq('GET', 'sys/policies/acl/cli-pol'))).toBeNull();
  });

  it('token capabilities <path>: capabilities-self answers per path and under "capabilities"', async () => {
    await goReq('PUT', 'sys/policies/acl/cap-pol', {
      policy: 'path "secret/data/cap/*" { capabilities = ["read", "list"] }',
    });
    const tok = parseSecret(
      (
        await goReq('POST', 'auth/token/create', {
          policies: ['cap-pol'],
          display_name: 'cap',
          num_uses: 0,
          type: 'service',
          entity_alias: '',
        })
      ).text,
    ).auth.client_token as string;
    const s = logicalResult(
      await goReq('POST', 'sys/capabilities-self', { paths: ['secret/data/cap/x'] }, { token: tok }),
    );
    expect(s.data['secret/data/cap/x']).toEqual(['list', 'read']);
    expect(s.data.capabilities).toEqual(['list', 'read']);
    const none = logicalResult(
      await goReq('POST', 'sys/capabilities-self', { paths: ['transit/keys'] }, { token: tok }),
    );
    expect(none.data.capabilities).toEqual(['deny']);
  });

  it('auth list: sys/auth has the token method and decodes into api.AuthMount', async () => {
    const a = await goReq('GET', 'sys/auth');
    expect(a.status).toBe(200);
    const s = parseSecret(a.text);
    expect(Object.keys(s.data)).toEqual(['token/']);
    expect(s.data['token/']).toMatchObject({
      type: 'token',
      description: 'token based credentials',
      local: false,
      seal_wrap: false,
      options: null,
    });
    decodeMountOutput('token/', s.data['token/']);
    expect(s['token/']).toEqual(s.data['token/']);
    const ui = parseSecret((await goReq('GET', 'sys/internal/ui/mounts/auth/token/lookup-self')).text);
    expect(ui.data).toMatchObject({ path: 'auth/token/', type: 'token', accessor: s.data['token/'].accessor });
  });
});

describe('vault read/write/list/delete (PUT writes, GET ?list=true lists)', () => {
  it('writes a key with PUT, encrypts with PUT, lists with GET ?list=true, deletes', async () => {
    expect((await goReq('PUT', 'transit/keys/cli-k', {})).status).toBe(200);
    const enc = logicalResult(
      await goReq('PUT', 'transit/encrypt/cli-k', { plaintext: Buffer.from('cli').toString('base64') }),
    );
    expect(enc.data.ciphertext).toMatch(/^vault:v1:/);
    const dec = logicalResult(await goReq('PUT', 'transit/decrypt/cli-k', { ciphertext: enc.data.ciphertext }));
    expect(Buffer.from(dec.data.plaintext, 'base64').toString()).toBe('cli');
    const list = logicalResult(await goReq('GET', 'transit/keys?list=true'));
    expect(list.data.keys).toContain('cli-k');
    expect(logicalResult(await goReq('GET', 'transit/keys/cli-k')).data.name).toBe('cli-k');
    expect((await goReq('PUT', 'transit/keys/cli-k/config', { deletion_allowed: 'true' })).status).toBeLessThan(300);
    const del = await goReq('DELETE', 'transit/keys/cli-k');
    expect(del.status).toBe(204);
    expect(logicalResult(await goReq('GET', 'transit/keys/cli-k'))).toBeNull();
  });

  it('accepts a JSON null body (api Logical().Write with nil data)', async () => {
    const a = await goReq('PUT', 'transit/keys/cli-null', null);
    expect(a.status).toBe(200);
    expect(parseSecret(a.text).warnings).toBeNull();
  });
});

describe('sys/internal/ui/mounts and `vault kv`', () => {
  it('preflight answers the longest matching mount with path, type, options, accessor, description, config', async () => {
    const a = await goReq('GET', 'sys/internal/ui/mounts/secret/app/config');
    expect(a.status).toBe(200);
    const s = parseSecret(a.text);
    expect(s.data).toMatchObject({
      path: 'secret/',
      type: 'kv',
      options: { version: '2' },
      description: expect.any(String),
      local: false,
      seal_wrap: false,
    });
    expect(s.data.accessor).toMatch(/^kv_/);
    decodeMountOutput('ui-mount', s.data);
    const mounts = parseSecret((await goReq('GET', 'sys/mounts')).text);
    expect(s.data.accessor).toBe(mounts.data['secret/'].accessor);
    expect(s.data.uuid).toBe(mounts.data['secret/'].uuid);
    const t = parseSecret((await goReq('GET', 'sys/internal/ui/mounts/transit')).text);
    expect(t.data).toMatchObject({ path: 'transit/', type: 'transit', options: null });
  });

  it('preflight picks the longest of nested mounts and respects path-segment boundaries', async () => {
    expect((await goReq('POST', 'sys/mounts/team/kv', { type: 'kv', options: { version: '2' } })).status).toBe(204);
    expect((await kvPreflight('team/kv/x/y')).mountPath).toBe('team/kv/');
    const other = await goReq('GET', 'sys/internal/ui/mounts/secretx/foo');
    expect(other.status).toBe(403);
    expect(goErrors(other)[0]).toBe(
      'preflight capability check returned 403, please ensure client\'s policies grant access to path "secretx/foo/"',
    );
  });

  it('answers 403 for no token, a bad token, an unknown mount (even for root) and a token without access', async () => {
    expect((await goReq('GET', 'sys/internal/ui/mounts/secret/x', undefined, { token: null })).status).toBe(403);
    expect((await goReq('GET', 'sys/internal/ui/mounts/secret/x', undefined, { token: 'bogus' })).status).toBe(403);
    const unknown = await goReq('GET', 'sys/internal/ui/mounts/nope/x');
    expect(unknown.status).toBe(403);
    expect(goErrors(unknown)[0]).toContain('preflight capability check returned 403');

    await goReq('PUT', 'sys/policies/acl/only-transit', { policy: 'path "transit/*" { capabilities = ["read"] }' });
    await goReq('PUT', 'sys/policies/acl/deep-secret', {
      policy: 'path "secret/data/team/app" { capabilities = ["read"] }',
    });
    await goReq('PUT', 'sys/policies/acl/deny-secret', { policy: 'path "secret/*" { capabilities = ["deny"] }' });
    const mk = async (p: string) =>
      parseSecret(
        (
          await goReq('POST', 'auth/token/create', {
            policies: [p],
            display_name: p,
            num_uses: 0,
            type: 'service',
            entity_alias: '',
          })
        ).text,
      ).auth.client_token as string;
    const onlyTransit = await mk('only-transit');
    const deep = await mk('deep-secret');
    const denyAll = await mk('deny-secret');
    expect((await goReq('GET', 'sys/internal/ui/mounts/secret/x', undefined, { token: onlyTransit })).status).toBe(403);
    expect((await goReq('GET', 'sys/internal/ui/mounts/transit/keys', undefined, { token: onlyTransit })).status).toBe(
      200,
    );
    // A capability on any path under the mount is enough (Vault's hasMountAccess walks the policy paths).
    const viaDeep = await goReq('GET', 'sys/internal/ui/mounts/secret/team/app', undefined, { token: deep });
    expect(viaDeep.status).toBe(200);
    expect(parseSecret(viaDeep.text).data.path).toBe('secret/');
    expect((await goReq('GET', 'sys/internal/ui/mounts/secret/x', undefined, { token: denyAll })).status).toBe(403);
  });

  it('lists the mounts a token can use at sys/internal/ui/mounts', async () => {
    const all = parseSecret((await goReq('GET', 'sys/internal/ui/mounts')).text);
    expect(Object.keys(all.data.secret)).toEqual(expect.arrayContaining(['secret/', 'transit/', 'team/kv/']));
    expect(all.data.secret['secret/'].options).toEqual({ version: '2' });
    const anon = await goReq('GET', 'sys/internal/ui/mounts', undefined, { token: null });
    expect(anon.status).toBe(200);
    expect(parseSecret(anon.text).data.secret).toEqual({});
  });

  it('kv put / get / get -version / patch / list / metadata get through the preflight', async () => {
    const putPath = await kvPath('secret/cli/app', 'data');
    expect(putPath).toBe('secret/data/cli/app');
    const put = logicalResult(await goReq('PUT', putPath, { data: { user: 'alice' }, options: {} }));
    typed(
      put.data,
      { created_time: isStr, deletion_time: isStr, destroyed: isBool, version: isInt, custom_metadata: isObj },
      'kv put',
    );
    expect(put.data.version).toBe(1);

    // `vault kv put -mount=secret cli/app2 ...` preflights the mount path alone.
    const { mountPath } = await kvPreflight('secret');
    expect(mountPath).toBe('secret/');
    expect(
      logicalResult(
        await goReq('PUT', addPrefix('secret/cli/app2', mountPath, 'data'), { data: { n: '2' }, options: { cas: 0 } }),
      ).data.version,
    ).toBe(1);

    const patch = await goReq(
      'PATCH',
      await kvPath('secret/cli/app', 'data'),
      { data: { pass: 'pw' }, options: {} },
      { headers: { 'Content-Type': 'application/merge-patch+json' } },
    );
    expect(patch.status).toBe(200);
    expect(parseSecret(patch.text).data.version).toBe(2);

    const got = logicalResult(await goReq('GET', await kvPath('secret/cli/app', 'data')));
    expect(got.data.data).toEqual({ user: 'alice', pass: 'pw' });
    typed(
      got.data.metadata,
      { created_time: isStr, deletion_time: isStr, destroyed: isBool, version: isInt },
      'kv get metadata',
    );
    expect(logicalResult(await goReq('GET', 'secret/data/cli/app?version=1')).data.data).toEqual({ user: 'alice' });

    const listPath = await kvPath('secret/cli', 'metadata');
    expect(listPath).toBe('secret/metadata/cli');
    expect(logicalResult(await goReq('GET', listPath + '?list=true')).data.keys).toEqual(['app', 'app2']);
    // `vault kv list secret/` lists "secret/metadata" (no trailing slash).
    const rootList = await kvPath('secret/', 'metadata');
    expect(rootList).toBe('secret/metadata');
    expect(logicalResult(await goReq('GET', rootList + '?list=true')).data.keys).toEqual(['cli/']);

    const meta = logicalResult(await goReq('GET', await kvPath('secret/cli/app', 'metadata')));
    typed(
      meta.data,
      {
        cas_required: isBool,
        created_time: isStr,
        current_version: isInt,
        max_versions: isInt,
        oldest_version: isInt,
        updated_time: isStr,
        versions: isObj,
        delete_version_after: isStr,
      },
      'kv metadata',
    );
    expect(Object.keys(meta.data.versions)).toEqual(['1', '2']);
  });

  it('kv delete / get of a deleted version / undelete / destroy with string versions / metadata put and delete', async () => {
    expect((await goReq('DELETE', await kvPath('secret/cli/app', 'data'))).status).toBe(204);
    // kvReadRequest: a 404 with data is returned as a secret (metadata shown, data nil).
    const deleted = await goReq('GET', 'secret/data/cli/app');
    expect(deleted.status).toBe(404);
    const s = logicalResult(deleted);
    expect(s.data.data).toBeNull();
    expect(s.data.metadata.deletion_time).not.toBe('');

    // command/kv_undelete.go and kv_destroy.go send versions as strings (kvParseVersionsFlags).
    expect((await goReq('PUT', await kvPath('secret/cli/app', 'undelete'), { versions: ['2'] })).status).toBe(204);
    expect(logicalResult(await goReq('GET', 'secret/data/cli/app')).data.data.pass).toBe('pw');
    expect((await goReq('PUT', await kvPath('secret/cli/app', 'destroy'), { versions: ['1'] })).status).toBe(204);
    const meta = logicalResult(await goReq('GET', 'secret/metadata/cli/app'));
    expect(meta.data.versions['1'].destroyed).toBe(true);

    const mput = await goReq('PUT', await kvPath('secret/cli/app', 'metadata'), {
      max_versions: 4,
      custom_metadata: { owner: 'ops' },
    });
    expect(mput.status).toBe(204);
    expect(logicalResult(await goReq('GET', 'secret/metadata/cli/app')).data).toMatchObject({
      max_versions: 4,
      custom_metadata: { owner: 'ops' },
    });
    expect((await goReq('DELETE', await kvPath('secret/cli/app', 'metadata'))).status).toBe(204);
    expect(logicalResult(await goReq('GET', 'secret/metadata/cli/app'))).toBeNull();
  });

  it('kv works for a token whose policy only covers secret/data/... (preflight allowed by the path walk)', async () => {
    await goReq('PUT', 'sys/policies/acl/kv-user', {
      policy: 'path "secret/data/team/*" { capabilities = ["create", "read", "update"] }',
    });
    const tok = parseSecret(
      (
        await goReq('POST', 'auth/token/create', {
          policies: ['kv-user'],
          display_name: 'kv',
          num_uses: 0,
          type: 'service',
          entity_alias: '',
        })
      ).text,
    ).auth.client_token as string;
    const p = await kvPath('secret/team/db', 'data', tok);
    expect((await goReq('PUT', p, { data: { pw: 'x' }, options: {} }, { token: tok })).status).toBe(200);
    expect(logicalResult(await goReq('GET', p, undefined, { token: tok })).data.data).toEqual({ pw: 'x' });
  });
});

describe('vault secrets list / enable / disable', () => {
  it('secrets list: every sys/mounts entry of a fresh daemon decodes into api.MountOutput', async () => {
    const s = parseSecret((await goReq('GET', 'sys/mounts')).text);
    for (const [p, m] of Object.entries(s.data)) decodeMountOutput(p, m);
    expect(s.data['secret/'].options).toEqual({ version: '2' });
  });

  it('secrets enable -version=2 kv: the CLI body mounts KV v2 and kv put works on it', async () => {
    // command/secrets_enable.go: MountInput with Config TTLs as duration strings ("0s"), trailing slash in the path.
    const body = {
      type: 'kv',
      description: '',
      config: { options: null, default_lease_ttl: '0s', max_lease_ttl: '0s', force_no_cache: false },
      local: false,
      seal_wrap: false,
      external_entropy_access: false,
      options: { version: '2' },
    };
    expect((await goReq('POST', 'sys/mounts/cli-kv/', body)).status).toBe(204);
    const p = await kvPath('cli-kv/a', 'data');
    expect(p).toBe('cli-kv/data/a');
    expect(logicalResult(await goReq('PUT', p, { data: { k: 'v' }, options: {} })).data.version).toBe(1);
    const enableTransit = { ...body, type: 'transit', options: null };
    expect((await goReq('POST', 'sys/mounts/cli-transit/', enableTransit)).status).toBe(204);
    expect(logicalResult(await goReq('GET', 'sys/mounts/cli-transit')).data.type).toBe('transit');
  });

  it('after `vault secrets enable`, sys/mounts config TTLs are integer seconds that `vault secrets list` decodes', async () => {
    // Vault parses default_lease_ttl/max_lease_ttl ("0s", "1h", "") into seconds and returns ints.
    const s = parseSecret((await goReq('GET', 'sys/mounts')).text);
    for (const [p, m] of Object.entries(s.data)) decodeMountOutput(p, m);
  });

  it('secrets disable: DELETE sys/mounts/<path>/ answers 204 and the mount is gone', async () => {
    expect((await goReq('DELETE', 'sys/mounts/cli-transit/')).status).toBe(204);
    expect((await goReq('DELETE', 'sys/mounts/cli-kv/')).status).toBe(204);
    const s = parseSecret((await goReq('GET', 'sys/mounts')).text);
    expect(s.data['cli-transit/']).toBeUndefined();
    expect((await goReq('GET', 'sys/internal/ui/mounts/cli-kv/a')).status).toBe(403);
  });
});

describe('vault operator init / unseal / seal and status while sealed (non-dev daemon)', () => {
  it('initialises with the CLI body, reports sealed after a restart, unseals with keys[0], seals', async () => {
    const nd = await startDaemon({ tcp: true, dev: false, args: ['--keychain', 'none'] });
    let again: Daemon | undefined;
    try {
      const base = nd.tcp!;
      expect((await goReq('GET', 'sys/init', undefined, { token: null, base })).json).toEqual({ initialized: false });
      // command/operator_init.go -> api.InitRequest (all fields sent).
      const init = await goReq(
        'PUT',
        'sys/init',
        {
          secret_shares: 1,
          secret_threshold: 1,
          stored_shares: 0,
          pgp_keys: null,
          recovery_shares: 0,
          recovery_threshold: 0,
          recovery_pgp_keys: null,
          root_token_pgp_key: '',
        },
        { token: null, base },
      );
      expect(init.status).toBe(200);
      typed(
        init.json,
        {
          keys: isStrList,
          keys_base64: isStrList,
          recovery_keys: isStrList,
          recovery_keys_base64: isStrList,
          root_token: isStr,
        },
        'InitResponse',
      );
      expect(init.json.keys).toHaveLength(1);
      await nd.stop();

      again = await startDaemon({ tcp: true, dev: false, dir: nd.dir, args: ['--keychain', 'none'] });
      const b2 = again.tcp!;
      const sealed = await goReq('GET', 'sys/seal-status', undefined, { token: null, base: b2 });
      expect(sealed.json).toMatchObject({ initialized: true, sealed: true }); // `vault status` exits 2
      expect((await goReq('GET', 'sys/leader', undefined, { token: null, base: b2 })).status).toBeLessThan(600);
      const denied = await goReq('GET', 'transit/keys?list=true', undefined, { token: init.json.root_token, base: b2 });
      expect(denied.status).toBe(503);
      expect(goErrors(denied)).toEqual(['Vault is sealed']);

      const un = await goReq('PUT', 'sys/unseal', { key: init.json.keys[0] }, { token: null, base: b2 });
      expect(un.status).toBe(200);
      typed(
        un.json,
        {
          type: isStr,
          initialized: isBool,
          sealed: isBool,
          t: isInt,
          n: isInt,
          progress: isInt,
          nonce: isStr,
          version: isStr,
          migration: isBool,
          recovery_seal: isBool,
          storage_type: isStr,
        },
        'unseal',
      );
      expect(un.json).toMatchObject({ sealed: false, t: 1, n: 1, progress: 0 });

      expect((await goReq('PUT', 'sys/seal', undefined, { token: init.json.root_token, base: b2 })).status).toBe(204);
      expect((await goReq('GET', 'sys/seal-status', undefined, { token: null, base: b2 })).json.sealed).toBe(true);
    } finally {
      await again?.stop();
      await nd.stop();
      cleanup(nd.dir);
    }
  });
});
