/**
 * Set-up of the daemon under test, done as a user would over HTTP: start `keyhold server` on file
 * storage with `--keychain none`, `POST sys/init`, `POST sys/unseal {key}`, mount transit, write a
 * policy for the benchmarked paths and create a non-root token holding only that policy.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { api, apiOk } from './http.js';
import { freePort, initAndUnseal, startKeyhold } from './procs.js';

/** The policy of the benchmark token: only what the cases call. */
export const BENCH_POLICY = `
path "transit/*" { capabilities = ["create", "read", "update", "list"] }
path "secret/*" { capabilities = ["create", "read", "update", "delete", "list"] }
path "sys/sync/*" { capabilities = ["create", "read", "update", "delete", "list"] }
`;

/** A case could not run because keyhold lacks the feature yet (reported, not fatal). */
export class MissingFeature extends Error {}

/**
 * Throw MissingFeature when an answer says the route does not exist (404 "unsupported path",
 * 405) so the case reports "feature missing" instead of a misleading figure.
 */
export function requireFeature(answer, what) {
  const errs = errorsOf(answer);
  if (isMissing(answer))
    throw new MissingFeature(`feature missing: ${what} (${answer.status}${errs ? ' ' + errs : ''})`);
  if (answer.status < 200 || answer.status > 299)
    throw new Error(`${what}: ${answer.status} ${errs || JSON.stringify(answer.body).slice(0, 200)}`);
  return answer.body;
}

function errorsOf(answer) {
  return answer.body && typeof answer.body === 'object' && Array.isArray(answer.body.errors)
    ? answer.body.errors.join('; ')
    : '';
}

/** True when the router said the path or operation does not exist (405, or 404 "unsupported path"). */
export function isMissing(answer) {
  return (
    answer.status === 405 || (answer.status === 404 && /unsupported path|no handler for route/i.test(errorsOf(answer)))
  );
}

/** Start and prepare the main daemon in `dir`; returns the context every case uses. */
export async function setupKeyhold(dir, { nodeArgs = [] } = {}) {
  mkdirSync(join(dir, 'main'), { recursive: true });
  const port = await freePort();
  const kh = await startKeyhold({
    dir: join(dir, 'main'),
    socket: join(dir, 'main', 'keyhold.sock'),
    port,
    storage: join(dir, 'main', 'data'),
    nodeArgs,
  });
  const { recoveryKey, rootToken } = await initAndUnseal(kh);
  await apiOk(kh.unix, 'POST', 'sys/mounts/transit', { type: 'transit' }, rootToken);
  await apiOk(kh.unix, 'POST', 'sys/policies/acl/bench', { policy: BENCH_POLICY }, rootToken);
  const tok = await apiOk(
    kh.unix,
    'POST',
    'auth/token/create',
    { policies: ['bench'], no_default_policy: false, ttl: '24h' },
    rootToken,
  );
  const token = tok.auth.client_token;
  return { kh, recoveryKey, rootToken, token, dir };
}

/**
 * Make sure a transit key exists (idempotent). Throws MissingFeature when key creation is not
 * implemented yet.
 */
export async function ensureKey(ctx, name, type, extra = {}) {
  const got = await api(ctx.kh.unix, 'GET', `transit/keys/${name}`, undefined, ctx.token);
  if (got.status === 200) return got.body;
  requireFeature(
    await api(ctx.kh.unix, 'POST', `transit/keys/${name}`, { type, ...extra }, ctx.token),
    `create transit key ${type}`,
  );
  return requireFeature(
    await api(ctx.kh.unix, 'GET', `transit/keys/${name}`, undefined, ctx.token),
    'read transit key',
  );
}
