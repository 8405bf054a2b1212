/**
 * Logins (issue 14): `login-approle` and `login-jwt`, logins per second through keyhold (the real
 * auth method: role lookup, secret-id HMAC or JWT verification with jose, identity entity, token
 * issue) against a bare node:http server doing the same verification directly with node:crypto /
 * jose and answering a fresh token. The JWT case also checks that the JWKS is fetched once per key,
 * not once per login.
 *
 * Like for like: the baseline answers a token it never stores, so the measured value is a login
 * whose role issues batch tokens (token_type=batch: nothing stored). The same login with service
 * tokens (stored durably before the answer, one group-committed append per batch of logins) runs in
 * the same rounds and is reported beside it (`service_logins_per_s`, `service_ratio`).
 */
import { generateKeyPairSync, createSign } from 'node:crypto';
import { createServer } from 'node:http';
import { api, apiOk } from '../lib/http.js';
import { runLoad } from '../lib/load.js';
import { median } from '../lib/stats.js';
import { cpuSecondsOf } from '../lib/procs.js';
import { requireFeature } from '../lib/setup.js';

const ge = (on, limit) => ({ on, op: '>=', limit });
const le = (on, limit) => ({ on, op: '<=', limit });

async function interleave(ctx, sides) {
  const runs = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
  for (let rep = 0; rep < ctx.cfg.reps; rep++) {
    for (const [name, spec] of Object.entries(sides)) {
      const c0 = cpuSecondsOf(spec.pid);
      const r = await runLoad({
        warmupSec: ctx.cfg.warmupSec,
        durationSec: ctx.cfg.durationSec,
        connections: 8,
        ...spec,
      });
      const c1 = cpuSecondsOf(spec.pid);
      r.cpuUs = c0 !== null && c1 !== null ? ((c1 - c0) * 1e6) / (r.ok + (r.warmupOk ?? 0)) : null;
      if (r.ok === 0) throw new Error(`${name} answered no 2xx: ${JSON.stringify(r.statuses)} errors=${r.errors}`);
      runs[name].push(r);
    }
  }
  const sum = (rs) => ({
    rps: median(rs.map((r) => r.rps)),
    cpuUs: median(rs.map((r) => r.cpuUs)),
    p99: median(rs.map((r) => r.latency.p99)),
    bad: rs.reduce((s, r) => s + r.bad, 0),
    reps: rs.map((r) => Math.round(r.rps)),
  });
  return { k: sum(runs.keyhold), s: sum(runs.service), b: sum(runs.bare) };
}

const approleCase = {
  id: 'login-approle',
  unit: 'logins/s',
  checks: [ge('ratio', 0.5)],
  describe:
    'POST auth/approle/login (role_id + unlimited secret_id) to a role issuing batch tokens, 8 connections, Unix socket; beside it the same with service tokens (stored); baseline: bare node:http server checking the secret id HMAC and answering a new token',
  async run(ctx) {
    const root = ctx.rootToken;
    requireFeature(await api(ctx.kh.unix, 'POST', 'sys/auth/approle', { type: 'approle' }, root), 'sys/auth approle');
    const creds = async (role, tokenType) => {
      await apiOk(
        ctx.kh.unix,
        'POST',
        `auth/approle/role/${role}`,
        { token_policies: 'bench', token_ttl: '10m', token_type: tokenType },
        root,
      );
      const roleId = (await apiOk(ctx.kh.unix, 'GET', `auth/approle/role/${role}/role-id`, undefined, root)).data
        .role_id;
      const secretId = (await apiOk(ctx.kh.unix, 'POST', `auth/approle/role/${role}/secret-id`, {}, root)).data
        .secret_id;
      return { role_id: roleId, secret_id: secretId };
    };
    const body = await creds('bench', 'batch');
    const serviceBody = await creds('bench-service', 'service');
    await apiOk(ctx.bareUnix.target, 'POST', 'auth/approle/register', body);
    const { k, s, b } = await interleave(ctx, {
      keyhold: { target: ctx.kh.unix, pid: ctx.kh.pid, path: '/v1/auth/approle/login', body },
      service: { target: ctx.kh.unix, pid: ctx.kh.pid, path: '/v1/auth/approle/login', body: serviceBody },
      bare: { target: ctx.bareUnix.target, pid: ctx.bareUnix.pid, path: '/v1/auth/approle/login', body },
    });
    return {
      value: k.rps,
      baseline: b.rps,
      figures: { p99_ms: k.p99 },
      detail: loginDetail(k, s, b),
      bad: k.bad + s.bad,
    };
  },
};

/** The detail of a login case: batch-token figures, the service-token run beside them, the baseline. */
function loginDetail(k, s, b) {
  return {
    token_type: 'batch',
    p99_ms: k.p99,
    cpu_us_per_login: k.cpuUs,
    reps: k.reps,
    service_logins_per_s: Math.round(s.rps),
    service_ratio: Math.round((s.rps / b.rps) * 1000) / 1000,
    service_p99_ms: s.p99,
    service_cpu_us_per_login: s.cpuUs,
    service_reps: s.reps,
    baseline_p99_ms: b.p99,
    baseline_cpu_us_per_login: b.cpuUs,
    baseline_reps: b.reps,
  };
}

/** A JWKS server counting its fetches (the provider side of the JWT case). */
async function jwksServer(jwk) {
  let fetches = 0;
  const server = createServer((req, res) => {
    fetches++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/jwks`,
    fetches: () => fetches,
    close: () => new Promise((r) => server.close(r)),
  };
}

const jwtCase = {
  id: 'login-jwt',
  unit: 'logins/s',
  checks: [ge('ratio', 0.5), le('jwks_fetches_per_key', 2)],
  describe:
    'POST auth/jwt/login with a GitHub-shaped RS256 token (JWKS URL) to a role issuing batch tokens, 8 connections, Unix socket; beside it the same with service tokens (stored); baseline: bare node:http server verifying the same token with jose and answering a new token',
  async run(ctx) {
    const root = ctx.rootToken;
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'bench-1', alg: 'RS256', use: 'sig' };
    const jwks = await jwksServer(jwk);
    try {
      requireFeature(await api(ctx.kh.unix, 'POST', 'sys/auth/jwt', { type: 'jwt' }, root), 'sys/auth jwt');
      await apiOk(ctx.kh.unix, 'POST', 'auth/jwt/config', { jwks_url: jwks.url, bound_issuer: 'bench-issuer' }, root);
      const role = {
        role_type: 'jwt',
        user_claim: 'repository',
        bound_audiences: 'bench',
        bound_claims: { repository: 'octo-org/octo-repo' },
        token_policies: 'bench',
        token_ttl: '10m',
      };
      await apiOk(ctx.kh.unix, 'POST', 'auth/jwt/role/ci', { ...role, token_type: 'batch' }, root);
      await apiOk(ctx.kh.unix, 'POST', 'auth/jwt/role/ci-service', { ...role, token_type: 'service' }, root);
      const now = Math.floor(Date.now() / 1000);
      const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const head = `${b64({ alg: 'RS256', kid: 'bench-1', typ: 'JWT' })}.${b64({ iss: 'bench-issuer', aud: 'bench', sub: 'repo:octo-org/octo-repo:ref:refs/heads/main', repository: 'octo-org/octo-repo', ref: 'refs/heads/main', iat: now, nbf: now - 5, exp: now + 3600 })}`;
      const jwt = `${head}.${createSign('RSA-SHA256').update(head).sign(privateKey).toString('base64url')}`;
      await apiOk(ctx.bareUnix.target, 'POST', 'auth/jwt/config', {
        jwt_validation_pubkeys: [publicKey.export({ type: 'spki', format: 'pem' })],
      });
      const before = jwks.fetches();
      const { k, s, b } = await interleave(ctx, {
        keyhold: { target: ctx.kh.unix, pid: ctx.kh.pid, path: '/v1/auth/jwt/login', body: { role: 'ci', jwt } },
        service: {
          target: ctx.kh.unix,
          pid: ctx.kh.pid,
          path: '/v1/auth/jwt/login',
          body: { role: 'ci-service', jwt },
        },
        bare: {
          target: ctx.bareUnix.target,
          pid: ctx.bareUnix.pid,
          path: '/v1/auth/jwt/login',
          body: { role: 'ci', jwt },
        },
      });
      const fetches = jwks.fetches() - before;
      return {
        value: k.rps,
        baseline: b.rps,
        figures: { p99_ms: k.p99, jwks_fetches_per_key: fetches },
        detail: { ...loginDetail(k, s, b), jwks_fetches_during_load: fetches },
        bad: k.bad + s.bad,
      };
    } finally {
      await jwks.close();
    }
  },
};

/** Login cases in the order of the issue. */
export const loginCases = [approleCase, jwtCase];
