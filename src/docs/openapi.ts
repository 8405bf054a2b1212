/**
 * OpenAPI 3 document of mounted routes, built from the route tables (design note section 1). Shape
 * follows Vault's `sys/internal/specs/openapi`: paths relative to `/v1`, LIST as GET with `list=true`,
 * extensions `x-vault-sudo`, `x-vault-unauthenticated`, `x-vault-createSupported`.
 */
import type { FieldSpec } from '../framework/fields.js';
import type { AnyRoute, Operation } from '../framework/route.js';
import type { MountedRoutes } from './mounted-routes.js';
import { pathVariants } from './route-paths.js';

/** A JSON object of the document. */
export type Json = Record<string, unknown>;

/** Options of `buildOpenApi`. */
export interface OpenApiOptions {
  version: string;
  /** Replace user mount paths with a `{<mount>_mount_path}` parameter (Vault's `generic_mount_paths`). */
  genericMountPaths?: boolean;
  /** Keep only operations this returns true for (ACL filter); `fullPath` has `{param}` placeholders. */
  include?: (fullPath: string, operation: Operation, route: AnyRoute) => boolean;
}

/** The JSON schema of one declared field. */
export function fieldSchema(spec: FieldSpec): Json {
  const s: Json = {};
  switch (spec.kind) {
    case 'string':
      s.type = 'string';
      break;
    case 'int':
      s.type = 'integer';
      break;
    case 'bool':
      s.type = 'boolean';
      break;
    case 'duration':
      s.type = 'string';
      s.format = 'duration';
      break;
    case 'strings':
      s.type = 'array';
      s.items = { type: 'string' };
      break;
    case 'ints':
      s.type = 'array';
      s.items = { type: 'integer' };
      break;
    case 'map':
      s.type = 'object';
      break;
    case 'stringMap':
      s.type = 'object';
      s.additionalProperties = { type: 'string' };
      break;
    case 'list':
      s.type = 'array';
      s.items = { type: 'object' };
      break;
    case 'base64':
      s.type = 'string';
      s.format = 'byte';
      break;
    case 'any':
      break;
  }
  s.description = spec.help;
  if (spec.choices) s.enum = [...spec.choices];
  if (spec.min !== undefined)
    Object.assign(
      s,
      spec.kind === 'int'
        ? { minimum: spec.min }
        : spec.kind === 'strings' || spec.kind === 'list'
          ? { minItems: spec.min }
          : spec.kind === 'string'
            ? { minLength: spec.min }
            : {},
    );
  if (spec.max !== undefined)
    Object.assign(
      s,
      spec.kind === 'int'
        ? { maximum: spec.max }
        : spec.kind === 'strings' || spec.kind === 'list'
          ? { maxItems: spec.max }
          : spec.kind === 'string'
            ? { maxLength: spec.max }
            : {},
    );
  const d = spec.default;
  if (d !== undefined && !Buffer.isBuffer(d) && spec.kind !== 'duration') s.default = d;
  if (spec.sensitive) s.writeOnly = true;
  return s;
}

const METHOD_OF: Record<Exclude<Operation, 'create'>, 'get' | 'post' | 'delete' | 'patch'> = {
  read: 'get',
  list: 'get',
  update: 'post',
  delete: 'delete',
  patch: 'patch',
};

function slug(s: string): string {
  return s
    .replace(/[{}]/g, '')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function mountParam(mountPath: string): string {
  return `${mountPath.replace(/\/$/, '').replace(/[^A-Za-z0-9]+/g, '_')}_mount_path`;
}

/** Build the OpenAPI 3.0 document of `mounts`. */
export function buildOpenApi(mounts: readonly MountedRoutes[], opts: OpenApiOptions): Json {
  const paths: Record<string, Json> = {};
  const tags: Json[] = [];
  for (const m of [...mounts].sort((a, b) => a.path.localeCompare(b.path))) {
    const tag = m.path.replace(/\/$/, '');
    let used = false;
    const generic = opts.genericMountPaths && !m.internal;
    const prefix = generic ? `{${mountParam(m.path)}}/` : m.path;
    for (const route of m.routes) {
      // A catch-all at the mount root (`(*rest)`: KV's "v1-style path" answer) is a fallback, not an endpoint.
      if (/^\(?\*/.test(route.path)) continue;
      for (const variant of pathVariants(route.path)) {
        const ops = (Object.keys(route.operations) as Operation[]).filter((o) => route.operations[o]);
        const hasWrite = ops.includes('update') || ops.includes('create');
        for (const op of ops) {
          if (op === 'create' && ops.includes('update')) continue;
          const method = op === 'create' ? 'post' : METHOD_OF[op];
          const listOnOwnPath = op === 'list' && ops.includes('read');
          const rel = (variant.path ? prefix + variant.path : prefix.replace(/\/$/, '')) + (listOnOwnPath ? '/' : '');
          const full = '/' + rel;
          const aclPath = m.path + variant.path + (op === 'list' ? '/' : '');
          if (opts.include && !opts.include(aclPath, op, route)) continue;
          const item = (paths[full] ??= {});
          if (item[method]) continue;
          item[method] = operation(
            m,
            route,
            variant.params,
            op,
            rel,
            hasWrite,
            generic ? mountParam(m.path) : undefined,
          );
          used = true;
        }
      }
    }
    if (used) tags.push({ name: tag, description: m.description });
  }
  const sorted: Record<string, Json> = {};
  for (const k of Object.keys(paths).sort()) sorted[k] = paths[k]!;
  return {
    openapi: '3.0.2',
    info: {
      title: 'keyhold API',
      description: 'HTTP API of keyhold, compatible with HashiCorp Vault. All routes are prefixed with `/v1/`.',
      version: opts.version,
      license: { name: 'Mozilla Public License 2.0', url: 'https://www.mozilla.org/en-US/MPL/2.0' },
    },
    servers: [{ url: '/v1' }],
    tags,
    paths: sorted,
    components: {
      securitySchemes: { vaultToken: { type: 'apiKey', in: 'header', name: 'X-Vault-Token' } },
      schemas: {
        VaultResponse: {
          type: 'object',
          description: "Vault's response envelope",
          properties: {
            request_id: { type: 'string' },
            lease_id: { type: 'string' },
            renewable: { type: 'boolean' },
            lease_duration: { type: 'integer' },
            data: { type: 'object', nullable: true },
            wrap_info: { type: 'object', nullable: true },
            warnings: { type: 'array', items: { type: 'string' }, nullable: true },
            auth: { type: 'object', nullable: true },
          },
        },
        VaultErrors: { type: 'object', properties: { errors: { type: 'array', items: { type: 'string' } } } },
      },
    },
    security: [{ vaultToken: [] }],
  };
}

function operation(
  m: MountedRoutes,
  route: AnyRoute,
  pathParams: string[],
  op: Operation,
  rel: string,
  hasWrite: boolean,
  mountParamName: string | undefined,
): Json {
  const fields = route.fields as Record<string, { spec: FieldSpec }>;
  const parameters: Json[] = [];
  if (mountParamName) {
    parameters.push({
      name: mountParamName,
      in: 'path',
      required: true,
      description: `Path where the ${m.type} engine is mounted`,
      schema: { type: 'string', default: m.path.replace(/\/$/, '') },
    });
  }
  for (const p of pathParams) {
    parameters.push({
      name: p,
      in: 'path',
      required: true,
      description: fields[p]?.spec.help ?? p,
      schema: { type: 'string' },
    });
  }
  const opName = op === 'create' ? 'write' : op === 'update' ? 'write' : op;
  const out: Json = {
    summary: route.summary,
    operationId: `${opName}-${slug(rel) || 'root'}`,
    tags: [m.path.replace(/\/$/, '')],
  };
  if (route.description) out.description = route.description;
  const bodyFields = Object.entries(fields).filter(([n]) => !pathParams.includes(n) && !route.params.includes(n));
  if (op === 'list') {
    parameters.push({
      name: 'list',
      in: 'query',
      required: true,
      description: 'Must be true (or use the LIST method)',
      schema: { type: 'string', enum: ['true'] },
    });
  } else if ((op === 'read' || op === 'delete') && !hasWrite && !route.operations.patch) {
    for (const [n, field] of bodyFields)
      parameters.push({
        name: n,
        in: 'query',
        required: false,
        description: field.spec.help,
        schema: fieldSchema(field.spec),
      });
  }
  if (parameters.length) out.parameters = parameters;
  if ((op === 'update' || op === 'create' || op === 'patch') && bodyFields.length) {
    const required = bodyFields.filter(([, fl]) => fl.spec.required && fl.spec.default === undefined).map(([n]) => n);
    const schema: Json = {
      type: 'object',
      properties: Object.fromEntries(bodyFields.map(([n, fl]) => [n, fieldSchema(fl.spec)])),
    };
    if (required.length) schema.required = required;
    out.requestBody = {
      required: required.length > 0,
      content: { [op === 'patch' ? 'application/merge-patch+json' : 'application/json']: { schema } },
    };
  }
  const ok = {
    description: 'OK',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/VaultResponse' } } },
  };
  const err = {
    description: 'Error',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/VaultErrors' } } },
  };
  out.responses =
    op === 'read' || op === 'list'
      ? { '200': ok, '404': { description: 'Not found' }, default: err }
      : { '200': ok, '204': { description: 'Empty body' }, default: err };
  if (route.unauthenticated) {
    out.security = [];
    out['x-vault-unauthenticated'] = true;
  }
  if (route.sudo) out['x-vault-sudo'] = true;
  if ((op === 'update' || op === 'create') && (route.exists || route.operations.create))
    out['x-vault-createSupported'] = true;
  return out;
}
