/**
 * KV v2 through the real router and core (test/support/harness.ts; dev mode: secret/ is a KV v2 mount,
 * root token "root").
 * Shapes and messages follow Vault's KV v2 plugin (reference sync-wire.md section 2).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startHarness, type Harness } from '../../support/harness.js';

const RFC3339_NANO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/;
const PATCH = { headers: { 'Content-Type': 'application/merge-patch+json' } };

let d: Harness;
beforeAll(async () => {
  d = await startHarness();
});
afterAll(async () => {
  await d.stop();
  cleanup(d.dir);
});

describe('data write and read', () => {
  it('answers a write with the version metadata and a read with data and metadata', async () => {
    const w = await d.req('POST', 'secret/data/shape/one', { data: { user: 'admin', n: { x: [1, 2] } } });
    expect(w.status).toBe(200);
    expect(Object.keys(w.body.data).sort()).toEqual([
      'created_time',
      'custom_metadata',
      'deletion_time',
      'destroyed',
      'version',
    ]);
    expect(w.body.data).toMatchObject({ custom_metadata: null, deletion_time: '', destroyed: false, version: 1 });
    expect(w.body.data.created_time).toMatch(RFC3339_NANO);
    expect(w.body.mount_type).toBe('kv');

    const r = await d.req('GET', 'secret/data/shape/one');
    expect(r.status).toBe(200);
    expect(r.body.data.data).toEqual({ user: 'admin', n: { x: [1, 2] } });
    expect(r.body.data.metadata).toEqual(w.body.data);
    expect(r.body).toMatchObject({
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      wrap_info: null,
      warnings: null,
      auth: null,
    });
  });

  it('reads older versions with ?version= and answers 404 {"errors":[]} for absent ones', async () => {
    await d.req('POST', 'secret/data/ver/a', { data: { v: 1 } });
    await d.req('POST', 'secret/data/ver/a', { data: { v: 2 } });
    expect((await d.req('GET', 'secret/data/ver/a?version=1')).body.data.data).toEqual({ v: 1 });
    expect((await d.req('GET', 'secret/data/ver/a')).body.data.metadata.version).toBe(2);
    const absent = await d.req('GET', 'secret/data/ver/a?version=9');
    expect(absent.status).toBe(404);
    expect(absent.body).toEqual({ errors: [] });
    const unknown = await d.req('GET', 'secret/data/never/written');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ errors: [] });
  });

  it('rejects a write without data with 400 "no data provided"', async () => {
    const r = await d.req('POST', 'secret/data/nodata', { options: {} });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['no data provided']);
  });

  it('rejects a non-object data with 400 naming "data"', async () => {
    const r = await d.req('POST', 'secret/data/baddata', { data: 'text' });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^data: /);
  });

  it('rejects an empty path segment with 400 naming "path"', async () => {
    const r = await d.req('POST', 'secret/data/a//b', { data: { a: 1 } });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^path: /);
  });

  it('stores names with spaces and unicode', async () => {
    const p = `secret/data/${encodeURIComponent('my app')}/${encodeURIComponent('clé')}`;
    expect((await d.req('POST', p, { data: { a: 1 } })).status).toBe(200);
    expect((await d.req('GET', p)).body.data.data).toEqual({ a: 1 });
    expect((await d.req('LIST', `secret/metadata/${encodeURIComponent('my app')}`)).body.data.keys).toEqual(['clé']);
  });
});

describe('check-and-set', () => {
  it("uses Vault's messages for a mismatch and a bad value", async () => {
    expect((await d.req('POST', 'secret/data/cas/a', { data: { a: 1 }, options: { cas: 0 } })).status).toBe(200);
    const again = await d.req('POST', 'secret/data/cas/a', { data: { a: 1 }, options: { cas: 0 } });
    expect(again.status).toBe(400);
    expect(again.body.errors).toEqual(['check-and-set parameter did not match the current version']);
    const bad = await d.req('POST', 'secret/data/cas/a', { data: { a: 1 }, options: { cas: 'abc' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(['error parsing check-and-set parameter']);
    expect((await d.req('POST', 'secret/data/cas/a', { data: { a: 2 }, options: { cas: 1 } })).body.data.version).toBe(
      2,
    );
  });

  it('requires cas when the secret sets cas_required', async () => {
    await d.req('POST', 'secret/metadata/cas/req', { cas_required: true });
    const r = await d.req('POST', 'secret/data/cas/req', { data: { a: 1 } });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['check-and-set parameter required for this call']);
    expect((await d.req('POST', 'secret/data/cas/req', { data: { a: 1 }, options: { cas: 0 } })).status).toBe(200);
  });

  it('lets exactly one of several parallel writers with the same cas win', async () => {
    await d.req('POST', 'secret/data/cas/race', { data: { v: 'start' } });
    for (let round = 1; round <= 5; round++) {
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          d.req('POST', 'secret/data/cas/race', { data: { v: `r${round}w${i}` }, options: { cas: round } }),
        ),
      );
      const ok = answers.filter((a) => a.status === 200);
      expect(ok).toHaveLength(1);
      expect(ok[0]!.body.data.version).toBe(round + 1);
      for (const a of answers.filter((x) => x.status !== 200))
        expect(a.body.errors).toEqual(['check-and-set parameter did not match the current version']);
    }
    expect((await d.req('GET', 'secret/metadata/cas/race')).body.data.current_version).toBe(6);
  });
});

describe('patch', () => {
  it('needs Content-Type application/merge-patch+json', async () => {
    await d.req('POST', 'secret/data/patch/ct', { data: { a: 1 } });
    expect((await d.req('PATCH', 'secret/data/patch/ct', { data: { b: 2 } })).status).toBe(415);
  });

  it('merges into a new version (null removes a key)', async () => {
    await d.req('POST', 'secret/data/patch/m', { data: { a: 1, b: { c: 2, d: 3 }, gone: true } });
    const r = await d.req('PATCH', 'secret/data/patch/m', { data: { b: { c: 9 }, gone: null, e: 'x' } }, PATCH);
    expect(r.status).toBe(200);
    expect(r.body.data.version).toBe(2);
    expect((await d.req('GET', 'secret/data/patch/m')).body.data.data).toEqual({ a: 1, b: { c: 9, d: 3 }, e: 'x' });
  });

  it('answers 404 for a missing secret and 404 with metadata for a deleted current version', async () => {
    expect((await d.req('PATCH', 'secret/data/patch/none', { data: { a: 1 } }, PATCH)).status).toBe(404);
    await d.req('POST', 'secret/data/patch/del', { data: { a: 1 } });
    await d.req('DELETE', 'secret/data/patch/del');
    const r = await d.req('PATCH', 'secret/data/patch/del', { data: { a: 2 } }, PATCH);
    expect(r.status).toBe(404);
    expect(r.body.data).toMatchObject({ version: 1, destroyed: false });
    expect(r.body.data.deletion_time).toMatch(RFC3339_NANO);
  });

  it('checks cas on patch', async () => {
    await d.req('POST', 'secret/data/patch/cas', { data: { a: 1 } });
    const r = await d.req('PATCH', 'secret/data/patch/cas', { data: { a: 2 }, options: { cas: 5 } }, PATCH);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['check-and-set parameter did not match the current version']);
  });
});

describe('soft delete, undelete and destroy', () => {
  it('soft-deletes the latest version: 404 with the metadata in the body, undoable', async () => {
    await d.req('POST', 'secret/data/del/a', { data: { a: 1 } });
    expect((await d.req('DELETE', 'secret/data/del/a')).status).toBe(204);
    const r = await d.req('GET', 'secret/data/del/a');
    expect(r.status).toBe(404);
    expect(r.body.data.data).toBeNull();
    expect(r.body.data.metadata).toMatchObject({ version: 1, destroyed: false, custom_metadata: null });
    expect(r.body.data.metadata.deletion_time).toMatch(RFC3339_NANO);
    expect((await d.req('POST', 'secret/undelete/del/a', { versions: [1] })).status).toBe(204);
    const back = await d.req('GET', 'secret/data/del/a');
    expect(back.status).toBe(200);
    expect(back.body.data.data).toEqual({ a: 1 });
    expect(back.body.data.metadata.deletion_time).toBe('');
  });

  it('deletes listed versions (comma-separated string accepted) and leaves the rest readable', async () => {
    for (let i = 1; i <= 3; i++) await d.req('POST', 'secret/data/del/b', { data: { i } });
    expect((await d.req('POST', 'secret/delete/del/b', { versions: '1,2' })).status).toBe(204);
    expect((await d.req('GET', 'secret/data/del/b?version=1')).status).toBe(404);
    expect((await d.req('GET', 'secret/data/del/b?version=2')).status).toBe(404);
    expect((await d.req('GET', 'secret/data/del/b')).body.data.data).toEqual({ i: 3 });
  });

  it('destroys versions permanently: undelete does not restore them', async () => {
    await d.req('POST', 'secret/data/del/c', { data: { a: 'one' } });
    await d.req('POST', 'secret/data/del/c', { data: { a: 'two' } });
    expect((await d.req('POST', 'secret/destroy/del/c', { versions: [1] })).status).toBe(204);
    await d.req('POST', 'secret/undelete/del/c', { versions: [1] });
    const r = await d.req('GET', 'secret/data/del/c?version=1');
    expect(r.status).toBe(404);
    expect(r.body.data).toEqual({
      data: null,
      metadata: expect.objectContaining({ destroyed: true, deletion_time: '', version: 1 }),
    });
    const m = await d.req('GET', 'secret/metadata/del/c');
    expect(m.body.data.versions['1']).toMatchObject({ destroyed: true });
    expect((await d.req('GET', 'secret/data/del/c')).body.data.data).toEqual({ a: 'two' });
  });

  it('requires a version list', async () => {
    for (const [word, msg] of [
      ['delete', 'No version number provided'],
      ['undelete', 'No version number provided'],
      ['destroy', 'no version number provided'],
    ]) {
      const r = await d.req('POST', `secret/${word}/del/a`, {});
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual([msg]);
    }
  });

  it('rejects a non-numeric version naming "versions"', async () => {
    const r = await d.req('POST', 'secret/delete/del/a', { versions: ['x'] });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^versions\[0\]: /);
  });
});

describe('metadata', () => {
  it("reads Vault's metadata shape with a versions map", async () => {
    await d.req('POST', 'secret/data/meta/a', { data: { a: 1 } });
    await d.req('POST', 'secret/data/meta/a', { data: { a: 2 } });
    const m = await d.req('GET', 'secret/metadata/meta/a');
    expect(m.status).toBe(200);
    expect(Object.keys(m.body.data).sort()).toEqual([
      'cas_required',
      'created_time',
      'current_version',
      'custom_metadata',
      'delete_version_after',
      'max_versions',
      'oldest_version',
      'updated_time',
      'versions',
    ]);
    expect(m.body.data).toMatchObject({
      cas_required: false,
      current_version: 2,
      custom_metadata: null,
      delete_version_after: '0s',
      max_versions: 0,
      oldest_version: 0,
    });
    expect(Object.keys(m.body.data.versions)).toEqual(['1', '2']);
    expect(m.body.data.versions['1']).toEqual({
      created_time: expect.stringMatching(RFC3339_NANO),
      deletion_time: '',
      destroyed: false,
    });
    expect(m.body.data.updated_time).toBe(m.body.data.versions['2'].created_time);
  });

  it('writes settings and custom metadata without adding a version; custom metadata shows on data reads', async () => {
    await d.req('POST', 'secret/data/meta/b', { data: { a: 1 } });
    const w = await d.req('POST', 'secret/metadata/meta/b', {
      max_versions: 5,
      delete_version_after: '1h',
      custom_metadata: { owner: 'ops', tier: 1 },
    });
    expect(w.status).toBe(204);
    const m = (await d.req('GET', 'secret/metadata/meta/b')).body.data;
    expect(m).toMatchObject({
      max_versions: 5,
      delete_version_after: '1h0m0s',
      custom_metadata: { owner: 'ops', tier: '1' },
      current_version: 1,
    });
    expect((await d.req('GET', 'secret/data/meta/b')).body.data.metadata.custom_metadata).toEqual({
      owner: 'ops',
      tier: '1',
    });
  });

  it('patches metadata: merges custom metadata, null removes a key; 404 when missing', async () => {
    await d.req('POST', 'secret/metadata/meta/c', { custom_metadata: { a: '1', b: '2' } });
    expect(
      (
        await d.req(
          'PATCH',
          'secret/metadata/meta/c',
          { custom_metadata: { a: null, c: '3' }, cas_required: true },
          PATCH,
        )
      ).status,
    ).toBe(204);
    expect((await d.req('GET', 'secret/metadata/meta/c')).body.data).toMatchObject({
      custom_metadata: { b: '2', c: '3' },
      cas_required: true,
      current_version: 0,
    });
    expect((await d.req('PATCH', 'secret/metadata/meta/none', { max_versions: 1 }, PATCH)).status).toBe(404);
  });

  it("rejects bad custom metadata with Vault's text", async () => {
    const r = await d.req('POST', 'secret/metadata/meta/d', { custom_metadata: { k: 'x'.repeat(600) } });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toContain(
      'custom_metadata validation failed: length of value for key "k" is 600 but must be 0 < len(value) <= 512',
    );
  });

  it('rejects a negative max_versions naming the field', async () => {
    const r = await d.req('POST', 'secret/metadata/meta/d', { max_versions: -1 });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^max_versions: /);
  });

  it('deletes every version and the metadata', async () => {
    await d.req('POST', 'secret/data/meta/gone/x', { data: { a: 1 } });
    await d.req('POST', 'secret/data/meta/gone/x', { data: { a: 2 } });
    expect((await d.req('DELETE', 'secret/metadata/meta/gone/x')).status).toBe(204);
    expect((await d.req('GET', 'secret/data/meta/gone/x?version=1')).status).toBe(404);
    expect((await d.req('GET', 'secret/metadata/meta/gone/x')).status).toBe(404);
    expect((await d.req('LIST', 'secret/metadata/meta/gone')).status).toBe(404);
    expect((await d.req('POST', 'secret/data/meta/gone/x', { data: { a: 3 } })).body.data.version).toBe(1);
  });
});

describe('listing', () => {
  beforeAll(async () => {
    for (const p of ['list/a', 'list/b/c', 'list/b/d/e', 'list/b'])
      await d.req('POST', `secret/data/${p}`, { data: { v: 1 } });
  });

  it('lists secrets and folders (folders end with /) with LIST, ?list=true and a trailing slash', async () => {
    const viaVerb = await d.req('LIST', 'secret/metadata/list');
    expect(viaVerb.status).toBe(200);
    expect(viaVerb.body.data.keys).toEqual(['a', 'b', 'b/']);
    expect((await d.req('GET', 'secret/metadata/list/?list=true')).body.data.keys).toEqual(['a', 'b', 'b/']);
    expect((await d.req('LIST', 'secret/metadata/list/b/')).body.data.keys).toEqual(['c', 'd/']);
  });

  it('lists the mount root with LIST secret/metadata and secret/metadata/', async () => {
    const a = await d.req('LIST', 'secret/metadata');
    const b = await d.req('LIST', 'secret/metadata/');
    expect(a.status).toBe(200);
    expect(a.body.data.keys).toContain('list/');
    expect(b.body.data.keys).toEqual(a.body.data.keys);
  });

  it('answers 404 for an empty folder', async () => {
    expect((await d.req('LIST', 'secret/metadata/list/nothing')).status).toBe(404);
  });
});

describe('subkeys', () => {
  it('returns the structure with values replaced by null, to a depth', async () => {
    await d.req('POST', 'secret/data/sub/a', { data: { a: 'x', b: { c: 1, d: { e: 2 } } } });
    const r = await d.req('GET', 'secret/subkeys/sub/a');
    expect(r.status).toBe(200);
    expect(r.body.data.subkeys).toEqual({ a: null, b: { c: null, d: { e: null } } });
    expect(r.body.data.metadata.version).toBe(1);
    expect((await d.req('GET', 'secret/subkeys/sub/a?depth=1')).body.data.subkeys).toEqual({ a: null, b: null });
  });

  it('answers 404 with metadata for a deleted version', async () => {
    await d.req('POST', 'secret/data/sub/b', { data: { a: 1 } });
    await d.req('DELETE', 'secret/data/sub/b');
    const r = await d.req('GET', 'secret/subkeys/sub/b');
    expect(r.status).toBe(404);
    expect(r.body.data.subkeys).toBeNull();
    expect(r.body.data.metadata.version).toBe(1);
  });
});

describe('v1-style and root paths', () => {
  it("answers 404 with Vault's warning naming the vault kv verb", async () => {
    const r = await d.req('GET', 'secret/foo');
    expect(r.status).toBe(404);
    expect(r.body.data).toBeNull();
    expect(r.body.warnings).toEqual([
      "Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints to use. If using the Vault CLI, use 'vault kv get' for this operation.",
    ]);
    const w = await d.req('POST', 'secret/foo', { a: 1 });
    expect(w.status).toBe(404);
    expect(w.body.warnings[0]).toContain("use 'vault kv put'");
    expect((await d.req('LIST', 'secret/foo')).body.warnings[0]).toContain("use 'vault kv list'");
  });

  it('refuses non-listing operations on the root of the mount', async () => {
    for (const p of ['secret/metadata', 'secret/data', 'secret/destroy']) {
      const r = await d.req('GET', p);
      expect(r.status).toBe(404);
      expect(r.body.warnings).toEqual(['Non-listing operations on the root of a K/V v2 mount are not supported.']);
    }
  });
});

describe('config and versions', () => {
  it('reads and writes the engine config (on a fresh mount)', async () => {
    expect((await d.req('POST', 'sys/mounts/cfgkv', { type: 'kv-v2' })).status).toBe(204);
    expect((await d.req('GET', 'cfgkv/config')).body.data).toEqual({
      cas_required: false,
      delete_version_after: '0s',
      max_versions: 0,
    });
    expect((await d.req('POST', 'cfgkv/config', { max_versions: 3, delete_version_after: '-1s' })).status).toBe(204);
    expect((await d.req('GET', 'cfgkv/config')).body.data).toEqual({
      cas_required: false,
      delete_version_after: '-1s',
      max_versions: 3,
    });
    for (let i = 1; i <= 5; i++) await d.req('POST', 'cfgkv/data/pruned', { data: { i } });
    const meta = (await d.req('GET', 'cfgkv/metadata/pruned')).body.data;
    expect(Object.keys(meta.versions)).toEqual(['3', '4', '5']);
    expect(meta.oldest_version).toBe(3);
    expect((await d.req('GET', 'cfgkv/data/pruned?version=2')).status).toBe(404);
    await d.req('POST', 'cfgkv/config', { cas_required: true });
    expect((await d.req('POST', 'cfgkv/data/pruned', { data: { i: 6 } })).body.errors).toEqual([
      'check-and-set parameter required for this call',
    ]);
  });

  it('rejects a bad delete_version_after naming the field', async () => {
    const r = await d.req('POST', 'cfgkv/config', { delete_version_after: 'soon' });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^delete_version_after: /);
  });

  it('keeps a 1 MiB value intact', async () => {
    const big = 'x'.repeat(1024 * 1024 - 16) + 'END-OF-VALUE';
    const w = await d.req('POST', 'secret/data/big/one', { data: { blob: big } });
    expect(w.status).toBe(200);
    const r = await d.req('GET', 'secret/data/big/one');
    expect(r.body.data.data.blob.length).toBe(big.length);
    expect(r.body.data.data.blob).toBe(big);
  });

  it('keeps 1,000 versions of one secret when max_versions allows, then prunes to a lower max_versions', async () => {
    await d.req('POST', 'secret/metadata/many', { max_versions: 1000 });
    for (let i = 1; i <= 1000; i++) {
      const w = await d.req('POST', 'secret/data/many', { data: { i } });
      if (w.status !== 200) throw new Error(`write ${i}: ${w.status} ${w.text}`);
    }
    const meta = (await d.req('GET', 'secret/metadata/many')).body.data;
    expect(meta.current_version).toBe(1000);
    expect(Object.keys(meta.versions)).toHaveLength(1000);
    expect((await d.req('GET', 'secret/data/many?version=1')).body.data.data).toEqual({ i: 1 });
    expect((await d.req('GET', 'secret/data/many?version=500')).body.data.data).toEqual({ i: 500 });
    await d.req('POST', 'secret/metadata/many', { max_versions: 10 });
    await d.req('POST', 'secret/data/many', { data: { i: 1001 } });
    const after = (await d.req('GET', 'secret/metadata/many')).body.data;
    expect(Object.keys(after.versions)).toHaveLength(10);
    expect(after.oldest_version).toBe(992);
    expect((await d.req('GET', 'secret/data/many?version=991')).status).toBe(404);
    expect((await d.req('GET', 'secret/data/many?version=992')).body.data.data).toEqual({ i: 992 });
  });
});

describe('more mounts', () => {
  it('mounts kv v2 elsewhere with its own kv_ accessor and separate data', async () => {
    expect((await d.req('POST', 'sys/mounts/team/kv', { type: 'kv', options: { version: '2' } })).status).toBe(204);
    const mounts = (await d.req('GET', 'sys/mounts')).body.data;
    expect(mounts['team/kv/']).toMatchObject({ type: 'kv', options: { version: '2' } });
    expect(mounts['team/kv/'].accessor).toMatch(/^kv_[0-9a-f]{8}$/);
    expect(mounts['team/kv/'].accessor).not.toBe(mounts['secret/'].accessor);
    await d.req('POST', 'team/kv/data/shared', { data: { team: true } });
    expect((await d.req('GET', 'team/kv/data/shared')).body.data.data).toEqual({ team: true });
    expect((await d.req('GET', 'secret/data/shared')).status).toBe(404);
  });
});

describe('ACL on data/ versus metadata/', () => {
  async function tokenFor(name: string, policy: string): Promise<string> {
    expect((await d.req('POST', `sys/policies/acl/${name}`, { policy })).status).toBe(204);
    const t = await d.req('POST', 'auth/token/create', { policies: [name] });
    expect(t.status).toBe(200);
    return t.body.auth.client_token as string;
  }

  beforeAll(async () => {
    await d.req('POST', 'secret/data/acl/app', { data: { pw: 'x' } });
  });

  it('a data-read token reads data but cannot list or read metadata, nor write', async () => {
    const token = await tokenFor('kv-data-read', 'path "secret/data/acl/*" { capabilities = ["read"] }');
    expect((await d.req('GET', 'secret/data/acl/app', undefined, { token })).status).toBe(200);
    expect((await d.req('LIST', 'secret/metadata/acl', undefined, { token })).status).toBe(403);
    expect((await d.req('GET', 'secret/metadata/acl/app', undefined, { token })).status).toBe(403);
    expect((await d.req('POST', 'secret/data/acl/app', { data: { pw: 'y' } }, { token })).status).toBe(403);
    expect((await d.req('POST', 'secret/destroy/acl/app', { versions: [1] }, { token })).status).toBe(403);
  });

  it('a metadata token lists and reads metadata but cannot read data', async () => {
    const token = await tokenFor('kv-meta', 'path "secret/metadata/*" { capabilities = ["read", "list"] }');
    expect((await d.req('LIST', 'secret/metadata/acl', undefined, { token })).body.data.keys).toEqual(['app']);
    expect((await d.req('LIST', 'secret/metadata', undefined, { token })).status).toBe(200);
    expect((await d.req('GET', 'secret/metadata/acl/app', undefined, { token })).status).toBe(200);
    expect((await d.req('GET', 'secret/data/acl/app', undefined, { token })).status).toBe(403);
  });

  it('tells create from update by existence: an update-only token cannot create a new secret', async () => {
    const token = await tokenFor('kv-update', 'path "secret/data/acl/*" { capabilities = ["update"] }');
    expect((await d.req('POST', 'secret/data/acl/app', { data: { pw: 'z' } }, { token })).status).toBe(200);
    expect((await d.req('POST', 'secret/data/acl/new', { data: { pw: 'z' } }, { token })).status).toBe(403);
  });

  it('needs the patch capability for PATCH', async () => {
    const token = await tokenFor('kv-rw', 'path "secret/data/acl/*" { capabilities = ["read", "update"] }');
    expect((await d.req('PATCH', 'secret/data/acl/app', { data: { more: 1 } }, { token, ...PATCH })).status).toBe(403);
    const patcher = await tokenFor('kv-patch', 'path "secret/data/acl/*" { capabilities = ["patch"] }');
    expect(
      (await d.req('PATCH', 'secret/data/acl/app', { data: { more: 1 } }, { token: patcher, ...PATCH })).status,
    ).toBe(200);
  });
});
