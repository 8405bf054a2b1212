import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { cleanup, httpReq, startDaemon, type Daemon } from '../support/daemon.js';
import { rawConnect, rawRequest } from './foundation-raw-http.js';

let d: Daemon;
beforeAll(async () => {
  d = await startDaemon({ tcp: true });
});
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

const POLICY = 'path "secret/data/app" { capabilities = ["read"] }';

describe('HTTP conventions: envelope and statuses', () => {
  it('answers a read with the Vault envelope, JSON content type and no-store', async () => {
    const r = await d.req('GET', 'auth/token/lookup-self');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['cache-control']).toBe('no-store');
    expect(Object.keys(r.body)).toEqual([
      'request_id',
      'lease_id',
      'renewable',
      'lease_duration',
      'data',
      'wrap_info',
      'warnings',
      'auth',
      'mount_type',
    ]);
    expect(r.body.request_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(r.body).toMatchObject({
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      wrap_info: null,
      warnings: null,
      auth: null,
    });
    expect(r.body.data.policies).toEqual(['root']);
    expect(r.text.endsWith('}\n')).toBe(true);
  });

  it('copies data to the top level of sys/ answers, as Vault does for legacy clients', async () => {
    const r = await d.req('GET', 'sys/mounts');
    expect(r.status).toBe(200);
    expect(r.body.data['transit/'].type).toBe('transit');
    expect(r.body['transit/'].accessor).toBe(r.body.data['transit/'].accessor);
    // Vault copies only the system backend's legacy routes (http/handler.go injectDataIntoTopRoutes);
    // secret-sync answers (a whole association map) carry `data` only.
    const sync = await d.req('GET', 'sys/sync/config');
    expect(sync.status).toBe(200);
    expect(sync.body.data.queue_capacity).toBeGreaterThan(0);
    expect(sync.body).not.toHaveProperty('queue_capacity');
  });

  it('answers an empty successful write with 204 and no body', async () => {
    const r = await d.req('PUT', 'sys/policies/acl/p204', { policy: POLICY });
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
  });

  it('gives {"errors":[]} 404 outside /v1 and 404 naming the route for an unknown path', async () => {
    const outside = await new Promise<{ status: number; text: string }>((res, rej) => {
      const q = request({ socketPath: d.socket, path: '/nope', method: 'GET' }, (r) => {
        let t = '';
        r.on('data', (c) => (t += c));
        r.on('end', () => res({ status: r.statusCode!, text: t }));
      });
      q.on('error', rej);
      q.end();
    });
    expect(outside.status).toBe(404);
    expect(JSON.parse(outside.text)).toEqual({ errors: [] });
    const r = await d.req('GET', 'no/such/mount');
    expect(r.status).toBe(404);
    expect(r.body.errors[0]).toMatch(/no handler for route "no\/such\/mount"/);
    const inMount = await d.req('GET', 'sys/no-such-endpoint');
    expect(inMount.status).toBe(404);
    expect(inMount.body.errors).toEqual(['unsupported path']);
  });

  it('answers 403 without a token, with an unknown token, and for unknown paths without a token', async () => {
    for (const [path, token] of [
      ['sys/mounts', null],
      ['sys/mounts', 'hvs.nope'],
      ['no/such/mount', null],
    ] as const) {
      const r = await d.req('GET', path, undefined, { token });
      expect(r.status).toBe(403);
      expect(r.body.errors).toEqual(['permission denied']);
    }
  });

  it('answers 405 for an operation the path does not support and for unknown verbs', async () => {
    expect((await d.req('DELETE', 'sys/mounts')).status).toBe(405);
    expect((await d.req('GET', 'sys/policies/acl')).status).toBe(405);
    const opt = await d.req('OPTIONS', 'sys/mounts');
    expect(opt.status).toBe(405);
    expect(opt.body).toEqual({ errors: ['unsupported operation'] });
  });

  it('answers malformed JSON with 400 "error parsing JSON"', async () => {
    const r = await d.req('POST', 'sys/policies/acl/x', undefined, {
      raw: '{"policy": "path',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^error parsing JSON/);
  });

  it('answers bad percent-encoding and NUL in the path with 400 naming path', async () => {
    expect((await d.req('GET', 'sys/policies/acl/%ZZ')).body.errors[0]).toMatch(/^path: /);
    const nul = await d.req('GET', 'sys/policies/acl/a%00b');
    expect(nul.status).toBe(400);
    expect(nul.body.errors[0]).toMatch(/^path: /);
  });

  it('answers HEAD sys/health with the status only', async () => {
    const r = await d.req('HEAD', 'sys/health', undefined, { token: null });
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
  });
});

describe('HTTP conventions: request data', () => {
  it('accepts a form-encoded body like a JSON one', async () => {
    const form = 'policy=' + encodeURIComponent(POLICY);
    const w = await d.req('POST', 'sys/policies/acl/formpol', undefined, {
      raw: form,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(w.status).toBe(204);
    const r = await d.req('GET', 'sys/policies/acl/formpol');
    expect(r.body.data.policy).toBe(POLICY);
  });

  it('coerces "true", "5" and "1h" by field type', async () => {
    const c = await d.req('POST', 'auth/token/create', {
      policies: 'default',
      ttl: '1h',
      num_uses: '5',
      renewable: 'false',
    });
    expect(c.status).toBe(200);
    expect(c.body.auth).toMatchObject({ lease_duration: 3600, renewable: false, num_uses: 5 });
    const bad = await d.req('POST', 'auth/token/create', { ttl: 'soon' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^ttl: /);
  });

  it('warns about unknown fields (sorted) and still succeeds', async () => {
    const r = await d.req('POST', 'auth/token/create', { zeta: 1, alpha: 'x', policies: ['default'] });
    expect(r.status).toBe(200);
    expect(r.body.warnings).toEqual(['Endpoint ignored these unrecognized parameters: [alpha zeta]']);
  });

  it('accepts the token as Authorization: Bearer, and X-Vault-Token wins over it', async () => {
    const ok = await d.req('GET', 'sys/mounts', undefined, { token: null, headers: { Authorization: 'Bearer root' } });
    expect(ok.status).toBe(200);
    const both = await d.req('GET', 'sys/mounts', undefined, {
      token: 'hvs.wrong',
      headers: { Authorization: 'Bearer root' },
    });
    expect(both.status).toBe(403);
  });

  it('never answers 500 to random bodies, paths and verbs', async () => {
    const paths = [
      'sys/mounts/x',
      'sys/policies/acl/x',
      'auth/token/create',
      'auth/token/lookup',
      'sys/plugins/reload/backend',
      'sys/capabilities-self',
      'sys/mounts/x/tune',
      'sys/unseal',
      'sys/init',
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...paths),
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'LIST'),
        fc.oneof(fc.json(), fc.string(), fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue())),
        async (path, method, body) => {
          const raw = typeof body === 'string' ? body : JSON.stringify(body);
          const r = await d.req(method, path, undefined, { raw, headers: { 'Content-Type': 'application/json' } });
          if (r.status >= 500) throw new Error(`${method} ${path} ${raw} -> ${r.status} ${r.text}`);
          return true;
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('HTTP conventions: LIST', () => {
  it('gives the same answer for the LIST verb and ?list=true (and 1, t)', async () => {
    const verb = await d.req('LIST', 'sys/policies/acl');
    expect(verb.status).toBe(200);
    expect(verb.body.data.keys).toContain('default');
    for (const v of ['true', '1', 't', 'TRUE']) {
      const q = await d.req('GET', `sys/policies/acl?list=${v}`);
      expect(q.status).toBe(200);
      expect(q.body.data).toEqual(verb.body.data);
    }
  });

  it('answers a bad list= value with 400 naming list', async () => {
    const r = await d.req('GET', 'sys/policies/acl?list=maybe');
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^list: /);
  });

  it('answers 404 {"errors":[]} when a list has no keys', async () => {
    const r = await d.req('LIST', 'auth/token/accessors');
    expect(r.status).toBe(200);
    // A fresh mount lists nothing: 404 like Vault. (sys/sync destinations are empty in a dev daemon.)
    const empty = await d.req('LIST', 'sys/sync/destinations');
    expect([404, 405]).toContain(empty.status);
  });

  for (const transport of ['unix', 'tcp'] as const) {
    it(`mixes LIST with POSTs carrying bodies (Content-Length and chunked) on one keep-alive ${transport} connection`, async () => {
      const c = await rawConnect(transport === 'unix' ? d.socket : d.tcp!);
      try {
        const body = JSON.stringify({ policy: POLICY });
        await c.write(rawRequest('POST', `/v1/sys/policies/acl/ka-${transport}-1`, { token: 'root', body }));
        expect((await c.read()).status).toBe(204);
        await c.write(rawRequest('LIST', '/v1/sys/policies/acl', { token: 'root' }));
        const l1 = await c.read();
        expect(l1.status).toBe(200);
        expect(JSON.parse(l1.body).data.keys).toContain(`ka-${transport}-1`);
        await c.write(
          rawRequest('POST', `/v1/sys/policies/acl/ka-${transport}-2`, { token: 'root', body, chunked: true }),
        );
        expect((await c.read()).status).toBe(204);
        // A body holding the bytes "LIST " must not be mistaken for a request.
        const tricky = JSON.stringify({ policy: POLICY, note: 'LIST /v1/sys/policies/acl HTTP/1.1' });
        await c.write(
          rawRequest('POST', `/v1/sys/policies/acl/ka-${transport}-3`, { token: 'root', body: tricky, chunked: true }),
        );
        expect((await c.read()).status).toBe(204);
        await c.write(rawRequest('LIST', '/v1/sys/policies/acl', { token: 'root' }));
        const l2 = await c.read();
        expect(JSON.parse(l2.body).data.keys).toEqual(
          expect.arrayContaining([`ka-${transport}-1`, `ka-${transport}-2`, `ka-${transport}-3`]),
        );
        await c.write(rawRequest('GET', '/v1/sys/policies/acl?list=true', { token: 'root' }));
        expect(JSON.parse((await c.read()).body).data).toEqual(JSON.parse(l2.body).data);
        expect(c.closed).toBe(false);
      } finally {
        c.close();
      }
    });
  }

  it('serves absolute-form targets (GET http://host/v1/...) by their path, as Go net/http serves Vault, on one keep-alive connection', async () => {
    const c = await rawConnect(d.tcp!);
    try {
      await c.write(rawRequest('GET', `${d.tcp}/v1/sys/health`));
      const h = await c.read();
      expect(h.status).toBe(200);
      expect(JSON.parse(h.body)).toMatchObject({ initialized: true, sealed: false });
      await c.write(
        rawRequest('POST', 'http://proxy.example:8200/v1/transit/keys/absolute', { token: 'root', body: '{}' }),
      );
      expect((await c.read()).status).toBeLessThan(300);
      await c.write(rawRequest('GET', 'http://proxy.example/v1/transit/keys?list=true', { token: 'root' }));
      const l = await c.read();
      expect(l.status).toBe(200);
      expect(JSON.parse(l.body).data.keys).toContain('absolute');
      // The token is still required, and a path outside /v1 is still a 404.
      await c.write(rawRequest('GET', `${d.tcp}/v1/sys/mounts`));
      expect((await c.read()).status).toBe(403);
      await c.write(rawRequest('GET', `${d.tcp}/other`, { token: 'root' }));
      expect((await c.read()).status).toBe(404);
    } finally {
      c.close();
    }
  });

  it('answers pipelined requests in order', async () => {
    const c = await rawConnect(d.socket);
    try {
      const body = JSON.stringify({ policy: POLICY });
      await c.write(
        rawRequest('LIST', '/v1/sys/policies/acl', { token: 'root' }) +
          rawRequest('POST', '/v1/sys/policies/acl/pipe-1', { token: 'root', body }) +
          rawRequest('LIST', '/v1/sys/policies/acl', { token: 'root' }) +
          rawRequest('POST', '/v1/sys/policies/acl/pipe-2', { token: 'root', body, chunked: true }) +
          rawRequest('GET', '/v1/sys/policies/acl/pipe-2', { token: 'root' }) +
          rawRequest('LIST', '/v1/sys/policies/acl', { token: 'root' }),
      );
      const rs = [];
      for (let i = 0; i < 6; i++) rs.push(await c.read());
      expect(rs.map((r) => r.status)).toEqual([200, 204, 200, 204, 200, 200]);
      expect(JSON.parse(rs[0]!.body).data.keys).not.toContain('pipe-1');
      expect(JSON.parse(rs[2]!.body).data.keys).toContain('pipe-1');
      expect(JSON.parse(rs[4]!.body).data.policy).toBe(POLICY);
      expect(JSON.parse(rs[5]!.body).data.keys).toEqual(expect.arrayContaining(['pipe-1', 'pipe-2']));
    } finally {
      c.close();
    }
  });

  it('understands a LIST request written one byte per packet', async () => {
    const c = await rawConnect(d.socket);
    try {
      const bytes = Buffer.from(rawRequest('LIST', '/v1/sys/policies/acl', { token: 'root' }));
      for (const b of bytes) {
        await c.write(Buffer.from([b]));
        await new Promise((r) => setImmediate(r));
      }
      const r = await c.read();
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body).data.keys).toContain('default');
      // The connection stays usable afterwards.
      await c.write(rawRequest('LIST', '/v1/sys/policies/acl', { token: 'root' }));
      expect((await c.read()).status).toBe(200);
    } finally {
      c.close();
    }
  });

  it('answers a real LOCK request with 405, not as a list', async () => {
    const c = await rawConnect(d.socket);
    try {
      await c.write(rawRequest('LOCK', '/v1/sys/policies/acl', { token: 'root' }));
      expect((await c.read()).status).toBe(405);
    } finally {
      c.close();
    }
  });
});

describe('HTTP conventions: body size limit', () => {
  const big = () => Buffer.alloc(33 * 1024 * 1024, 0x61);

  it('answers a 33 MiB body with 413, and the client receives it (no reset)', async () => {
    const body = Buffer.concat([Buffer.from('{"policy":"'), big(), Buffer.from('"}')]);
    const r = await httpReq({ socket: d.socket }, 'POST', 'sys/policies/acl/huge', undefined, {
      token: 'root',
      raw: body,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(r.status).toBe(413);
    expect(r.body.errors[0]).toMatch(/too large/);
    // The daemon is fine afterwards.
    expect((await d.req('GET', 'sys/mounts')).status).toBe(200);
  });

  it('answers a 33 MiB chunked body (no Content-Length) with 413 too', async () => {
    const status = await new Promise<number>((res, rej) => {
      const q = request(
        {
          socketPath: d.socket,
          path: '/v1/sys/policies/acl/huge2',
          method: 'POST',
          headers: { 'X-Vault-Token': 'root', 'Content-Type': 'application/json' },
        },
        (r) => {
          r.resume();
          r.on('end', () => res(r.statusCode!));
        },
      );
      q.on('error', rej);
      q.on('socket', (sock) => sock.on('error', () => {})); // a late EPIPE after the 413 is expected
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      let i = 0;
      const pump = () => {
        while (i < 33) {
          i++;
          if (!q.write(chunk)) return q.once('drain', pump);
        }
        q.end();
      };
      pump();
    });
    expect(status).toBe(413);
  });

  it('a transit encrypt over 32 MB, streamed with its declared length, gets 413 (transit spec 7 item 11)', async () => {
    // Declared and streamed bodies both count; the daemon may answer before the body is sent, so
    // the client tolerates the server closing early (EPIPE/ECONNRESET).
    const status = await new Promise<number>((resolve, reject) => {
      const size = 33 * 1024 * 1024;
      const req = request(
        {
          socketPath: d.socket,
          path: '/v1/transit/encrypt/e',
          method: 'POST',
          headers: { 'X-Vault-Token': d.token, 'Content-Type': 'application/json', 'Content-Length': String(size) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) =>
        e.code === 'EPIPE' || e.code === 'ECONNRESET' ? undefined : reject(e),
      );
      const chunk = Buffer.alloc(1024 * 1024, 0x41);
      chunk.write('{"plaintext":"', 0);
      let sent = 0;
      const pump = (): void => {
        while (sent < size) {
          sent += chunk.length;
          if (!req.write(sent <= size ? chunk : chunk.subarray(0, size - (sent - chunk.length))))
            return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    expect(status).toBe(413);
  });

  it('over TCP too', async () => {
    const r = await httpReq({ base: d.tcp }, 'POST', 'sys/policies/acl/huge3', undefined, {
      token: 'root',
      raw: big(),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(r.status).toBe(413);
  });
});
