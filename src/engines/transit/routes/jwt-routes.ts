/**
 * JWKS and JWT routes of the transit engine (issue 17 part 2): `jwks/:name` (a JWK Set, raw JSON as
 * relying parties fetch it; without a token when the key sets `public_jwks`), `jwt/sign/:name` and
 * `jwt/verify/:name`. Handlers are thin; the work is in ops/jwt.ts.
 */
import { f } from '../../../framework/fields.js';
import { invalid, isKeyholdError, notFound } from '../../../framework/errors.js';
import { oneOf, routesFor, type AnyRoute } from '../../../framework/route.js';
import type { TransitEngine } from '../transit-engine.js';
import type { TransitKey } from '../keyring/types.js';
import { checkKeyName } from '../keyring/key-rules.js';
import { refuseSoftDeleted } from '../keyring/soft-delete.js';
import { MAX_JWT_BATCH, jwksOf, jwtAlgorithm, parseJwtItem, signJwt, verifyJwt } from '../ops/jwt.js';

const route = routesFor<TransitEngine>();
const keyName = f.name('Name of the signing key');

async function readKey(engine: TransitEngine, name: string): Promise<TransitKey> {
  const key = engine.keys.cached(name) ?? (await engine.keys.get(name));
  if (!key) throw invalid(`signing key not found: ${name}`);
  refuseSoftDeleted(key);
  return key;
}

/** Whether `jwks/:name` answers without a token: only for an existing key whose config sets public_jwks. */
export async function publicJwks(engine: TransitEngine, name: string): Promise<boolean> {
  try {
    checkKeyName(name); // before any storage read: the name comes straight from the URL
  } catch {
    return false;
  }
  const key = engine.keys.cached(name) ?? (await engine.keys.peekConfig(name));
  return key?.publicJwks === true;
}

/** Routes: jwks, jwt/sign, jwt/verify. */
export const jwtRoutes: AnyRoute[] = [
  route({
    path: 'jwks/:name',
    summary: 'The public keys of a signing key as a JWK Set: one JWK per version valid for verification',
    description:
      "Raw JSON ({\"keys\": [...]}, RFC 7517), not Vault's envelope, so relying parties can fetch it directly. kid is the RFC 7638 thumbprint of each version's public key; alg is EdDSA, ES256/384/512, RS256 or ML-DSA-44/65/87 (kty AKP) by key type. Readable without a token when the key's config sets public_jwks=true.",
    fields: { name: keyName },
    unauthenticatedWhen: ({ engine, params }) => publicJwks(engine, params.name ?? ''),
    operations: {
      read: async ({ engine, data }) => {
        const key = await engine.keys.withLock(
          data.name,
          'shared',
          async () => engine.keys.cached(data.name) ?? (await engine.keys.get(data.name)),
        );
        if (!key) throw notFound();
        refuseSoftDeleted(key);
        return { raw: { contentType: 'application/json', body: JSON.stringify(jwksOf(key)) } };
      },
    },
  }),
  route({
    path: 'jwt/sign/:name',
    summary: 'Sign a JWT with a transit key (iat, exp, kid and typ set by keyhold); returns a compact JWS',
    fields: {
      name: keyName,
      claims: f.map('JWT claims (a JSON object); iat and exp are set by keyhold'),
      header: f.map('Extra JOSE header parameters (alg and kid are set by keyhold; typ defaults to JWT)'),
      ttl: f.duration('Lifetime: exp = iat + ttl (default 1h)'),
      iss: f.string('Issuer claim (iss)'),
      aud: f.strings('Audience claim (aud): one value or a list'),
      key_version: f.int('Key version to sign with (0 = latest)').min(0).default(0),
      batch_input: f.list(
        `Items {claims, header, ttl, iss, aud} to sign in one request (at most ${MAX_JWT_BATCH}); answers batch_results`,
      ),
    },
    rules: [oneOf('claims', 'batch_input')],
    operations: {
      update: async ({ engine, data }) =>
        engine.keys.withLock(data.name, 'shared', async () => {
          const key = await readKey(engine, data.name);
          const now = engine.env.clock.now() / 1000;
          if (data.batch_input === undefined) {
            const r = await signJwt(key, {
              claims: data.claims!,
              header: data.header,
              ttl: data.ttl,
              iss: data.iss,
              aud: data.aud,
              keyVersion: data.key_version,
              now,
            });
            return { data: { token: r.token, kid: r.kid, key_version: r.version } };
          }
          const items = data.batch_input;
          if (items.length === 0) throw invalid('batch_input', 'is empty');
          if (items.length > MAX_JWT_BATCH)
            throw invalid('batch_input', `at most ${MAX_JWT_BATCH} items, got ${items.length}`);
          jwtAlgorithm(key); // a key that cannot sign JWTs fails the request, not each item
          // Items sign concurrently on the thread pool; each failure stays with its item.
          const results = await Promise.all(
            items.map(async (item, i) => {
              try {
                const r = await signJwt(key, {
                  ...parseJwtItem(item, i),
                  keyVersion: data.key_version,
                  now,
                  offload: true,
                });
                return { token: r.token, kid: r.kid, key_version: r.version };
              } catch (e) {
                if (!isKeyholdError(e)) throw e;
                return { error: e.message };
              }
            }),
          );
          return { data: { batch_results: results } };
        }),
    },
    cli: {
      command: 'transit jwt sign',
      args: ['name'],
      output: 'token',
      examples: [
        `keyhold transit jwt sign issuer --claims '{"sub":"build-42"}' --ttl 15m --aud ci --field token`,
        `keyhold transit jwt sign issuer --claims @claims.json --iss https://keyhold.example`,
      ],
    },
  }),
  route({
    path: 'jwt/verify/:name',
    summary:
      'Verify a JWT signed by a transit key: signature, kid (a version valid for verification), exp/nbf, and iss/aud when given',
    fields: {
      name: keyName,
      token: f.string('The compact JWS to verify').required().sensitive(),
      iss: f.string('Expected issuer'),
      aud: f.strings('Accepted audiences (one must match)'),
      leeway: f.duration('Clock skew tolerated for exp and nbf (default 0)'),
    },
    operations: {
      update: async ({ engine, data }) =>
        engine.keys.withLock(data.name, 'shared', async () => {
          const key = await readKey(engine, data.name);
          const r = verifyJwt(key, data.token, {
            iss: data.iss,
            aud: data.aud,
            leeway: data.leeway,
            now: engine.env.clock.now() / 1000,
          });
          const out: Record<string, unknown> = { valid: r.valid, key_version: r.version };
          if (r.error) out.error = r.error;
          if (r.valid) {
            out.header = r.header;
            out.claims = r.claims;
          }
          return { data: out };
        }),
    },
    cli: {
      command: 'transit jwt verify',
      args: ['name'],
      stdin: 'token',
      output: 'valid',
      examples: [
        'echo -n "$JWT" | keyhold transit jwt verify issuer',
        'keyhold transit jwt verify issuer --aud ci --field valid < token.jwt',
      ],
    },
  }),
];
