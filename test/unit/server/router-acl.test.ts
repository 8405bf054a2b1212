// The router applies the ACL from the route's operation and existence check; handlers never do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Router, type RouterCore } from '../../../src/server/router.js';
import { startListeners, type Listeners } from '../../../src/server/http.js';
import { routesFor } from '../../../src/framework/route.js';
import { f } from '../../../src/framework/fields.js';
import { ACL } from '../../../src/auth/acl.js';
import { parsePolicy } from '../../../src/auth/policies.js';
import type { MountInfo, TokenInfo } from '../../../src/framework/context.js';
import { httpReq } from '../../support/daemon.js';

const route = routesFor<{ things: Set<string> }>();
const calls: string[] = [];
const routes = [
  route({
    path: 'things',
    summary: 'list',
    fields: {},
    operations: { list: ({ engine }) => ({ data: { keys: [...engine.things].sort() } }) },
  }),
  route({
    path: 'things/:name',
    summary: 'upsert',
    fields: { name: f.name('n'), size: f.int('s').min(1) },
    exists: ({ engine, data }) => engine.things.has(data.name),
    operations: {
      create: ({ engine, data }) => {
        calls.push(`create ${data.name}`);
        engine.things.add(data.name);
      },
      update: ({ data }) => {
        calls.push(`update ${data.name}`);
      },
      read: ({ engine, data }) => (engine.things.has(data.name) ? { data: { name: data.name } } : undefined),
    },
  }),
  route({ path: 'empty', summary: 'empty list', fields: {}, operations: { list: () => ({ data: { keys: [] } }) } }),
  route({
    path: 'meta',
    summary: 'list with metadata only',
    fields: {},
    operations: { list: () => ({ data: { key_info: { a: 1 } } }) },
  }),
  route({
    path: 'danger',
    summary: 'sudo',
    fields: {},
    sudo: true,
    operations: { update: () => ({ data: { ok: true } }) },
  }),
  route({
    path: 'open',
    summary: 'no token',
    fields: {},
    unauthenticated: true,
    allowSealed: true,
    operations: { read: () => ({ data: { open: true } }) },
  }),
];
const mount: MountInfo = {
  path: 'm/',
  type: 'test',
  accessor: 'test_1',
  uuid: 'u',
  description: '',
  options: null,
  config: {},
  local: false,
  seal_wrap: false,
  external_entropy_access: false,
};
const instance = { things: new Set(['exists']) };
const POLICIES: Record<string, string> = {
  updater: 'path "m/things/*" { capabilities = ["update", "read"] }',
  creator: 'path "m/things/*" { capabilities = ["create"] }',
  lister:
    'path "m/things/" { capabilities = ["list"] }\npath "m/empty/" { capabilities = ["list"] }\npath "m/meta/" { capabilities = ["list"] }',
  nolistslash: 'path "m/things" { capabilities = ["list"] }',
  sudoer: 'path "m/danger" { capabilities = ["update", "sudo"] }',
  nosudo: 'path "m/danger" { capabilities = ["update"] }',
};
let sealed = false;
const core: RouterCore = {
  isSealed: () => sealed,
  resolve: (p) => (p.startsWith('m/') || p === 'm' ? { mount, routes, instance } : null),
  lookupToken: async (id) =>
    POLICIES[id] ? ({ id, accessor: id, policies: [id], root: false, displayName: id } as TokenInfo) : null,
  authorizer: { allowed: (t, cap, p) => new ACL(t.policies.map((n) => parsePolicy(n, POLICIES[n]!))).allowed(cap, p) },
  logger: { debug() {}, info() {}, warn() {}, error() {} },
  maxRequestSize: 1024,
};
let listeners: Listeners;
let base: string;
beforeAll(async () => {
  const router = new Router(core);
  listeners = await startListeners(
    [{ type: 'tcp', address: '127.0.0.1:0' }],
    (req, res) => void router.handle(req, res),
  );
  base = listeners.addresses[0]!;
});
afterAll(() => listeners.close(1000));

const call = (method: string, path: string, token: string | null, body?: unknown) =>
  httpReq({ base }, method, path, body, { token: token ?? undefined });

describe('router ACL', () => {
  it('turns an update of a missing object into create (Vault upsert) and checks create', async () => {
    calls.length = 0;
    expect((await call('POST', 'm/things/exists', 'updater', {})).status).toBe(204);
    expect((await call('POST', 'm/things/new1', 'updater', {})).status).toBe(403);
    expect((await call('POST', 'm/things/new1', 'creator', {})).status).toBe(204);
    expect((await call('POST', 'm/things/exists', 'creator', {})).status).toBe(403);
    // The denied requests never reached a handler.
    expect(calls).toEqual(['update exists', 'create new1']);
  });

  it('checks list on the path with a trailing slash', async () => {
    expect((await call('LIST', 'm/things', 'lister')).status).toBe(200);
    expect((await call('GET', 'm/things?list=true', 'lister')).status).toBe(200);
    // Vault's AllowOperation tries the path without the trailing slash too (issue 18 part 3).
    expect((await call('LIST', 'm/things', 'nolistslash')).status).toBe(200);
  });

  it('answers an empty list with 404 {"errors":[]}, but keeps a list answer that carries other data', async () => {
    const empty = await call('LIST', 'm/empty', 'lister');
    expect(empty.status).toBe(404);
    expect(empty.body).toEqual({ errors: [] });
    expect((await call('LIST', 'm/meta', 'lister')).body.data).toEqual({ key_info: { a: 1 } });
  });

  it('needs sudo for sudo routes', async () => {
    expect((await call('POST', 'm/danger', 'sudoer', {})).status).toBe(200);
    expect((await call('POST', 'm/danger', 'nosudo', {})).status).toBe(403);
  });

  it('answers 403 before validating fields, so a denied caller learns nothing about them', async () => {
    const denied = await call('POST', 'm/things/new2', 'lister', { size: 'huge' });
    expect(denied.status).toBe(403);
    const allowed = await call('POST', 'm/things/exists', 'updater', { size: 'huge' });
    expect(allowed.status).toBe(400);
    expect(allowed.body.errors[0]).toMatch(/^size: /);
  });

  it('lets unauthenticated routes answer without a token, and turns a read with no reply into 404', async () => {
    expect((await call('GET', 'm/open', null)).body.data).toEqual({ open: true });
    expect((await call('GET', 'm/things/absent', 'updater')).status).toBe(404);
  });

  it('answers 503 while sealed except on routes allowed while sealed', async () => {
    sealed = true;
    try {
      expect((await call('GET', 'm/things/exists', 'updater')).status).toBe(503);
      expect((await call('GET', 'elsewhere/x', 'updater')).status).toBe(503);
      expect((await call('GET', 'm/open', null)).status).toBe(200);
    } finally {
      sealed = false;
    }
  });
});
