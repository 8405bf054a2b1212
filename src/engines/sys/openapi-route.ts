/**
 * `GET sys/internal/specs/openapi`: the OpenAPI 3 document of every mounted route, paths prefixed by the
 * live mount table. Like Vault the path is unauthenticated and the document holds what the requester may
 * use: all routes for a root token, routes the token's policies allow otherwise, unauthenticated routes
 * without a token.
 *
 * The document itself is built by src/docs (the generator reads every engine's route table); the
 * server hands that generator to the sys module (`sysModule`), so engines never import the docs.
 */
import type { MountInfo, Operation } from '../../framework/context.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { SysParts } from './sys-parts.js';

/** What one OpenAPI document is built with. */
export interface OpenApiRequest {
  version: string;
  /** Replace user mount paths with a `{<mount>_mount_path}` parameter (Vault's `generic_mount_paths`). */
  genericMountPaths: boolean;
  /** Keep only the operations this returns true for (the requester's ACL). */
  include: (fullPath: string, operation: Operation, route: AnyRoute) => boolean;
}

/** Builds the OpenAPI document of the internal mounts plus `mounts` (src/docs provides it). */
export type OpenApiGenerator = (mounts: MountInfo[], request: OpenApiRequest) => unknown;

const route = routesFor<SysParts>();

/** The `sys/internal/specs/openapi` route, answering with the document `generate` builds. */
export function openapiRoute(generate: OpenApiGenerator): AnyRoute {
  return route({
    path: 'internal/specs/openapi',
    summary: 'OpenAPI 3 document of the mounted routes the requester may use',
    description:
      'Generated from the same route tables that drive the router; user mounts appear under their mount paths.',
    fields: {
      generic_mount_paths: f.bool('Replace mount paths with a {<mount>_mount_path} parameter').default(false),
      context: f.string('Accepted for Vault compatibility; ignored'),
    },
    unauthenticated: true,
    operations: {
      read: async ({ engine, data, token, allowed }) => {
        const doc = generate(engine.mounts.list(), {
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
}
