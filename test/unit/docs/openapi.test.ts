import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { f } from '../../../src/framework/fields.js';
import { routesFor } from '../../../src/framework/route.js';
import { DEV_MOUNTS, mountedRoutes, type MountedRoutes } from '../../../src/docs/catalog.js';
import { buildOpenApi, fieldSchema, type Json } from '../../../src/docs/openapi.js';
import { ENGINES } from '../../../src/engines/registry.js';

const route = routesFor<unknown>();

/** A small table covering every shape the generator handles. */
const sample: MountedRoutes = {
  path: 'demo/',
  type: 'demo',
  description: 'demo engine',
  internal: false,
  routes: [
    route({
      path: 'keys/:name',
      summary: 'Create, read or delete a key',
      fields: {
        name: f.name('Key name'),
        type: f.string('Key type').oneOf('a', 'b').default('a'),
        size: f.int('Size').min(32).max(512),
        secret: f.base64('Plaintext').sensitive(),
      },
      exists: () => true,
      operations: { read: () => undefined, update: () => undefined, delete: () => undefined },
    }),
    route({ path: 'keys', summary: 'List keys', fields: {}, operations: { list: () => undefined } }),
    route({
      path: 'random(/:source)(/:bytes)',
      summary: 'Random bytes',
      fields: { source: f.string('Source'), bytes: f.int('Bytes') },
      operations: { update: () => undefined },
    }),
    route({
      path: 'data/*path',
      summary: 'Secret data',
      fields: { path: f.name('Secret path'), data: f.map('Data') },
      operations: { read: () => undefined, list: () => undefined, patch: () => undefined },
    }),
    route({
      path: 'health',
      summary: 'Health',
      fields: { standbyok: f.bool('Standby ok') },
      unauthenticated: true,
      operations: { read: () => undefined },
    }),
    route({ path: 'seal', summary: 'Seal', fields: {}, sudo: true, operations: { update: () => undefined } }),
  ],
};

async function validate(doc: Json): Promise<{ valid: boolean; errors?: unknown }> {
  const v = new Validator();
  return v.validate(JSON.parse(JSON.stringify(doc)));
}

describe('OpenAPI document', () => {
  it('validates for every route table with the dev mounts (OpenAPI 3.0 schema)', async () => {
    const doc = buildOpenApi(mountedRoutes(DEV_MOUNTS), { version: '0.1.0' });
    const res = await validate(doc);
    expect(res.errors).toBeUndefined();
    expect(res.valid).toBe(true);
    expect(doc.openapi).toBe('3.0.2');
  });

  it('the committed docs/openapi.json is valid', async () => {
    const { readFileSync } = await import('node:fs');
    const doc = JSON.parse(readFileSync(new URL('../../../docs/openapi.json', import.meta.url), 'utf8')) as Json;
    const res = await validate(doc);
    expect(res.valid).toBe(true);
  });

  it('has a path for every route of every module, prefixed by its mount', () => {
    const doc = buildOpenApi(mountedRoutes(DEV_MOUNTS), { version: '0.1.0' });
    const paths = Object.keys(doc.paths as Json);
    expect(paths).toContain('/sys/mounts');
    expect(paths).toContain('/sys/internal/specs/openapi');
    expect(paths).toContain('/auth/token/lookup-self');
    for (const r of ENGINES.transit!.routes) {
      const first = '/transit/' + r.path.replace(/\(.*?\)/g, '').replace(/[:*](\w+)/g, '{$1}');
      expect(
        paths.some((p) => p === first || p === first + '/' || p === first.replace(/\/$/, '')),
        first,
      ).toBe(true);
    }
  });

  it('validates with a user mount and generic mount paths', async () => {
    const doc = buildOpenApi([...mountedRoutes([{ path: 'payments/', type: 'transit' }]), sample], {
      version: '1',
      genericMountPaths: true,
    });
    expect((await validate(doc)).valid).toBe(true);
    const paths = doc.paths as Record<string, Json>;
    expect(Object.keys(paths)).toContain('/{demo_mount_path}/keys/{name}');
    expect(Object.keys(paths).some((p) => p.startsWith('/{payments_mount_path}/'))).toBe(true);
    // Internal mounts keep their fixed paths.
    expect(Object.keys(paths)).toContain('/sys/mounts');
    const param = ((paths['/{demo_mount_path}/keys/{name}']!.get as Json).parameters as Json[])[0]!;
    expect(param).toMatchObject({ name: 'demo_mount_path', in: 'path', required: true, schema: { default: 'demo' } });
  });

  it('maps operations: read GET, update POST with a body, delete DELETE, list GET ?list=true on the trailing-slash path', async () => {
    const doc = buildOpenApi([sample], { version: '1' });
    expect((await validate(doc)).valid).toBe(true);
    const paths = doc.paths as Record<string, Record<string, Json>>;
    expect(Object.keys(paths['/demo/keys/{name}']!).sort()).toEqual(['delete', 'get', 'post']);
    expect(paths['/demo/keys']!.get!.parameters).toEqual([
      expect.objectContaining({ name: 'list', in: 'query', required: true }),
    ]);
    // data/*path has both read and list: the list lives on the path with a trailing slash.
    expect(paths['/demo/data/{path}']!.get).toBeDefined();
    expect(paths['/demo/data/{path}/']!.get!.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'list' })]),
    );
    expect(Object.keys((paths['/demo/data/{path}']!.patch!.requestBody as Json).content as Json)).toEqual([
      'application/merge-patch+json',
    ]);
    const body = ((paths['/demo/keys/{name}']!.post!.requestBody as Json).content as Record<string, Json>)[
      'application/json'
    ]!.schema as Json;
    expect(Object.keys(body.properties as Json).sort()).toEqual(['secret', 'size', 'type']);
    expect(paths['/demo/keys/{name}']!.post!['x-vault-createSupported']).toBe(true);
  });

  it('expands optional parts without duplicate templated shapes', () => {
    const doc = buildOpenApi([sample], { version: '1' });
    const random = Object.keys(doc.paths as Json).filter((p) => p.startsWith('/demo/random'));
    expect(random.sort()).toEqual(['/demo/random', '/demo/random/{source}', '/demo/random/{source}/{bytes}']);
  });

  it('marks unauthenticated and sudo routes with the Vault extensions', () => {
    const paths = buildOpenApi([sample], { version: '1' }).paths as Record<string, Record<string, Json>>;
    expect(paths['/demo/health']!.get).toMatchObject({ security: [], 'x-vault-unauthenticated': true });
    expect(paths['/demo/health']!.get!.parameters).toEqual([
      expect.objectContaining({ name: 'standbyok', in: 'query' }),
    ]);
    expect(paths['/demo/seal']!.post!['x-vault-sudo']).toBe(true);
  });

  it('keeps only what the include filter admits and drops empty tags', () => {
    const seen: string[] = [];
    const doc = buildOpenApi([sample], {
      version: '1',
      include: (p, op) => {
        seen.push(`${op} ${p}`);
        return p === 'demo/keys/';
      },
    });
    expect(Object.keys(doc.paths as Json)).toEqual(['/demo/keys']);
    expect(seen).toContain('read demo/keys/{name}');
    expect(seen).toContain('list demo/keys/');
    expect(buildOpenApi([sample], { version: '1', include: () => false }).tags).toEqual([]);
  });

  it('gives every operation a unique operationId', () => {
    const doc = buildOpenApi([...mountedRoutes(DEV_MOUNTS), sample], { version: '1' });
    const ids = Object.values(doc.paths as Record<string, Record<string, Json>>).flatMap((item) =>
      Object.values(item).map((op) => op.operationId),
    );
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('describes field kinds as JSON schemas', () => {
    expect(fieldSchema(f.base64('x').sensitive().spec)).toMatchObject({
      type: 'string',
      format: 'byte',
      writeOnly: true,
    });
    expect(fieldSchema(f.int('x').min(1).max(9).spec)).toMatchObject({ type: 'integer', minimum: 1, maximum: 9 });
    expect(fieldSchema(f.strings('x').spec)).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(fieldSchema(f.stringMap('x').spec)).toMatchObject({
      type: 'object',
      additionalProperties: { type: 'string' },
    });
    expect(fieldSchema(f.string('x').oneOf('a', 'b').default('a').spec)).toMatchObject({
      type: 'string',
      enum: ['a', 'b'],
      default: 'a',
    });
    expect(fieldSchema(f.duration('x').spec)).toMatchObject({ type: 'string', format: 'duration' });
  });
});

describe('OpenAPI catch-all routes', () => {
  it('leaves out a catch-all route at the mount root', () => {
    const catchAll: MountedRoutes = {
      ...sample,
      routes: [
        ...sample.routes,
        route({
          path: '(*rest)',
          summary: 'fallback',
          fields: { rest: f.string('r') },
          operations: { read: () => undefined },
        }),
      ],
    };
    const paths = Object.keys(buildOpenApi([catchAll], { version: '1' }).paths as Json);
    expect(paths).not.toContain('/demo');
    expect(paths).not.toContain('/demo/{rest}');
    expect(paths).toContain('/demo/keys/{name}');
  });
});
