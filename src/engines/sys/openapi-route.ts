/**
 * `GET sys/internal/specs/openapi`: the OpenAPI 3 document of every mounted route, paths prefixed by the
 * live mount table. Like Vault the path is unauthenticated and the document holds what the requester may
 * use: all routes for a root token, routes the token's policies allow otherwise, unauthenticated routes
 * without a token.
 */
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import { buildOpenApi } from '../../docs/openapi.js';
import type { SysParts } from './sys-parts.js';

const route = routesFor<SysParts>();

/** The `sys/internal/specs/openapi` route. */
export const openapiRoute: AnyRoute = route({
  path: 'internal/specs/openapi',
  summary: 'OpenAPI 3 document of the mounted routes the requester may use',
  description: 'Generated from the same route tables that drive the router; user mounts appear under their mount paths.',
  fields: {
    generic_mount_paths: f.bool('Replace mount paths with a {<mount>_mount_path} parameter').default(false),
    context: f.string('Accepted for Vault compatibility; ignored'),
  },
  unauthenticated: true,
  operations: {
    read: async ({ engine, data, token, allowed }) => {
      // Imported here: the catalogue imports the sys module, which imports this file.
      const { mountedRoutes } = await import('../../docs/catalog.js');
      const mounts = mountedRoutes(engine.mounts.list());
      const doc = buildOpenApi(mounts, {
        version: engine.version,
        genericMountPaths: data.generic_mount_paths,
        include: (fullPath, op, r) => {
          if (r.unauthenticated || token?.root) return true;
          if (!token) return false;
          // `{name}` placeholders probe the policy's globs: `transit/keys/*` admits `transit/keys/{name}`.
          return allowed(op, fullPath) || (op === 'update' && r.exists !== undefined && allowed('create', fullPath));
        },
      });
      return { raw: { contentType: 'application/json', body: JSON.stringify(doc) } };
    },
  },
});
