/**
 * The identity token routes under `identity/oidc/` (Vault's vault/identity_store_oidc.go): issuer
 * config, named keys (+ rotate), roles, token issuance for the calling token's entity, introspection,
 * and the unauthenticated discovery document and JWKS. The issuer itself is src/auth/oidc/issuer.ts.
 */
import { invalid, notFound } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { IdentityStore } from '../../auth/identity.js';
import { OIDC_ALGORITHMS, isOidcAlgorithm, type OidcAlgorithm } from '../../auth/oidc/signing-keys.js';
import { checkTemplate, templateText, type TemplateIdentity } from '../../auth/oidc/claims-template.js';
import type { OidcIssuer } from '../../auth/oidc/issuer.js';

/** What the OIDC routes need of the identity engine instance. */
export interface OidcEngine {
  identity: IdentityStore;
  oidc: OidcIssuer;
}

const route = routesFor<OidcEngine>();

const json = (v: unknown) => ({ raw: { contentType: 'application/json', body: JSON.stringify(v) } });

function algorithmOf(v: string | undefined): OidcAlgorithm | undefined {
  if (v === undefined || v === '') return undefined;
  if (!isOidcAlgorithm(v))
    throw invalid('algorithm', `unknown signing algorithm "${v}": one of ${OIDC_ALGORITHMS.join(', ')}`);
  return v;
}

/** The template view of an entity. */
async function subjectOf(identity: IdentityStore, entityId: string): Promise<TemplateIdentity | null> {
  const e = await identity.entity(entityId);
  if (!e || e.disabled) return null;
  // The entity's groups, direct and inherited (ids and names in the same order).
  const view = await identity.tokenIdentity(e.id);
  return {
    id: e.id,
    name: e.name,
    metadata: e.metadata,
    groupIds: view?.groupIds ?? [],
    groupNames: view?.groupNames ?? [],
    aliases: e.aliases.map((a) => ({ id: a.id, name: a.name, mountAccessor: a.mount_accessor, metadata: a.metadata })),
  };
}

type Ctx<D> = { engine: OidcEngine; data: D };

/** Create or update a key (the same write: absent fields keep their values or defaults). */
async function writeKey({
  engine,
  data,
}: Ctx<{
  name: string;
  algorithm?: string;
  rotation_period?: number;
  verification_ttl?: number;
  allowed_client_ids?: string[];
}>): Promise<void> {
  await engine.oidc.putKey(data.name, {
    algorithm: algorithmOf(data.algorithm),
    rotation_period: data.rotation_period,
    verification_ttl: data.verification_ttl,
    allowed_client_ids: data.allowed_client_ids,
  });
}

/** Create or update a role (the template is checked first; base64 is stored decoded). */
async function writeRole({
  engine,
  data,
}: Ctx<{ name: string; key?: string; template?: string; ttl?: number; client_id?: string }>): Promise<void> {
  if (data.template !== undefined) checkTemplate(data.template);
  await engine.oidc.putRole(data.name, {
    key: data.key,
    template: data.template === undefined ? undefined : templateText(data.template),
    ttl: data.ttl,
    client_id: data.client_id,
  });
}

/** Routes of identity tokens (mounted with the identity engine at identity/). */
export const oidcRoutes: AnyRoute[] = [
  route({
    path: 'oidc/config',
    summary: "The issuer of identity tokens (scheme, host and port; default: the server's api_addr)",
    fields: { issuer: f.string('Issuer URL base, e.g. https://keyhold.example.com:8200') },
    operations: {
      read: async ({ engine }) => ({ data: { issuer: await engine.oidc.configuredIssuer() } }),
      update: async ({ engine, data }) => {
        await engine.oidc.setIssuer(data.issuer ?? '');
      },
    },
  }),
  route({
    path: 'oidc/key',
    summary: 'List identity token signing keys',
    fields: {},
    operations: { list: async ({ engine }) => ({ data: { keys: await engine.oidc.keyNames() } }) },
  }),
  route({
    path: 'oidc/key/:name',
    summary: 'Create, read, update or delete a named identity token signing key',
    fields: {
      name: f.name('Key name'),
      rotation_period: f.duration('How often the key rotates (default 24h)'),
      verification_ttl: f.duration('How long a rotated-out public key stays published (default 24h)'),
      algorithm: f.string(`Signing algorithm: ${OIDC_ALGORITHMS.join(', ')} (default RS256)`),
      allowed_client_ids: f.strings('Client ids of roles that may use this key ("*" for any)'),
    },
    exists: async ({ engine, data }) => (await engine.oidc.key(data.name)) !== null,
    operations: {
      read: async ({ engine, data }) => {
        const k = await engine.oidc.key(data.name);
        if (!k) throw notFound();
        return {
          data: {
            algorithm: k.algorithm,
            allowed_client_ids: k.allowed_client_ids,
            rotation_period: k.rotation_period,
            verification_ttl: k.verification_ttl,
          },
        };
      },
      create: async (ctx) => writeKey(ctx),
      update: async (ctx) => writeKey(ctx),
      delete: async ({ engine, data }) => {
        await engine.oidc.deleteKey(data.name);
      },
    },
  }),
  route({
    path: 'oidc/key/:name/rotate',
    summary: 'Rotate a signing key now (the old public key stays published for verification_ttl)',
    fields: {
      name: f.name('Key name'),
      verification_ttl: f.duration("How long the old public key stays published (default: the key's)"),
    },
    operations: {
      update: async ({ engine, data }) => {
        await engine.oidc.rotate(data.name, data.verification_ttl);
      },
    },
  }),
  route({
    path: 'oidc/role',
    summary: 'List identity token roles',
    fields: {},
    operations: { list: async ({ engine }) => ({ data: { keys: await engine.oidc.roleNames() } }) },
  }),
  route({
    path: 'oidc/role/:name',
    summary: 'Create, read, update or delete an identity token role',
    fields: {
      name: f.name('Role name'),
      key: f.string('Signing key (required)'),
      template: f.string(
        'Claims template: a JSON object, optionally base64-encoded, with {{identity.entity...}} placeholders',
      ),
      client_id: f.string('Audience (aud) of the tokens; made once when not given'),
      ttl: f.duration('Lifetime of the tokens (default 24h)'),
    },
    exists: async ({ engine, data }) => (await engine.oidc.role(data.name)) !== null,
    operations: {
      read: async ({ engine, data }) => {
        const r = await engine.oidc.role(data.name);
        if (!r) throw notFound();
        return { data: { client_id: r.client_id, key: r.key, template: r.template, ttl: r.ttl } };
      },
      create: async (ctx) => writeRole(ctx),
      update: async (ctx) => writeRole(ctx),
      delete: async ({ engine, data }) => {
        await engine.oidc.deleteRole(data.name);
      },
    },
  }),
  route({
    path: 'oidc/token/:name',
    summary: "A signed identity token of a role for the calling token's entity",
    fields: { name: f.name('Role name') },
    operations: {
      read: async ({ engine, data, token }) => {
        const entityId = token?.identity?.entityId;
        if (!entityId) throw invalid("no entity associated with the request's token");
        const subject = await subjectOf(engine.identity, entityId);
        if (!subject) throw invalid("no entity associated with the request's token");
        return { data: await engine.oidc.issue(data.name, subject) };
      },
    },
  }),
  route({
    path: 'oidc/introspect',
    summary: 'Whether an identity token is active (signature, expiry, issuer, audience, entity)',
    fields: { token: f.string('The identity token').sensitive(), client_id: f.string('Expected audience (optional)') },
    operations: {
      update: async ({ engine, data }) => {
        if (!data.token) throw invalid('missing token');
        return {
          data: await engine.oidc.introspect(
            data.token,
            data.client_id || undefined,
            async (id) => (await subjectOf(engine.identity, id)) !== null,
          ),
        };
      },
    },
  }),
  route({
    path: 'oidc/.well-known/openid-configuration',
    summary: 'OpenID discovery document of the identity token issuer (no token needed)',
    fields: {},
    unauthenticated: true,
    operations: {
      read: async ({ engine }) => {
        const issuer = await engine.oidc.issuer();
        return json({
          issuer,
          jwks_uri: `${issuer}/.well-known/keys`,
          response_types_supported: ['id_token'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: [...OIDC_ALGORITHMS],
        });
      },
    },
  }),
  route({
    path: 'oidc/.well-known/keys',
    summary: 'Public keys that verify identity tokens, as a JWK Set (no token needed)',
    fields: {},
    unauthenticated: true,
    operations: { read: async ({ engine }) => json(await engine.oidc.jwks()) },
  }),
];
