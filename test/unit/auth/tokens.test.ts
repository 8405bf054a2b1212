import { describe, expect, it } from 'vitest';
import { TokenStore } from '../../../src/auth/tokens.js';
import { InmemBackend } from '../../../src/storage/inmem.js';
import { Barrier } from '../../../src/storage/barrier.js';
import { listAll, prefixed } from '../../../src/storage/backend.js';

async function setup() {
  const backend = new InmemBackend();
  const barrier = new Barrier(backend);
  barrier.unseal(Buffer.alloc(32, 7));
  let now = 1_700_000_000_000;
  const clock = { now: () => now };
  const storage = prefixed(barrier, 'sys/token/');
  const store = new TokenStore(storage, clock);
  await store.init();
  return { store, storage, backend, clock, advance: (ms: number) => (now += ms) };
}

describe('token store', () => {
  it('issues hvs. tokens and stores only an HMAC of them', async () => {
    const { store, storage } = await setup();
    const { id, entry } = await store.create({ policies: ['b', 'a', 'a'] });
    expect(id).toMatch(/^hvs\.[A-Za-z0-9]{24}$/);
    expect(entry.policies).toEqual(['a', 'b']);
    const keys = await listAll(storage, '');
    for (const k of keys) {
      expect(k).not.toContain(id);
      expect((await storage.get(k))!.toString('latin1')).not.toContain(id.slice(4));
    }
    expect(keys).toContain(`id/${store.hash(id)}`);
  });

  it('refuses a token once its ttl has passed, and removes it', async () => {
    const { store, advance } = await setup();
    const { id } = await store.create({ policies: ['p'], ttl: 60 });
    expect(await store.lookup(id)).not.toBeNull();
    advance(59_000);
    expect(await store.lookup(id)).not.toBeNull();
    advance(1_000);
    expect(await store.lookup(id)).toBeNull();
    expect(await store.listAccessors()).toEqual([]);
  });

  it('revokes a limited-use token when its last use is spent', async () => {
    const { store } = await setup();
    const { id } = await store.create({ policies: ['p'], num_uses: 2 });
    expect(await store.spendUse((await store.lookup(id))!)).toBe('ok');
    expect((await store.lookup(id))!.num_uses).toBe(1);
    expect(await store.spendUse((await store.lookup(id))!)).toBe('last');
    expect(await store.lookup(id)).toBeNull();
  });

  it('renews up to explicit_max_ttl and no further', async () => {
    const { store, advance } = await setup();
    const { id } = await store.create({ policies: ['p'], ttl: 10, explicit_max_ttl: 30 });
    advance(8_000);
    let e = await store.renew((await store.lookup(id))!, 10);
    expect(e.expire_time - e.creation_time).toBe(18);
    advance(8_000);
    e = await store.renew((await store.lookup(id))!, 100);
    expect(e.expire_time - e.creation_time).toBe(30);
    advance(14_500);
    expect(await store.lookup(id)).toBeNull();
  });

  it('revokes children with their parent, but not orphans', async () => {
    const { store } = await setup();
    const parent = await store.create({ policies: ['p'] });
    const child = await store.create({ policies: ['p'], parent_accessor: parent.entry.accessor });
    const grandchild = await store.create({ policies: ['p'], parent_accessor: child.entry.accessor });
    const orphan = await store.create({ policies: ['p'], orphan: true });
    await store.revokeEntry(parent.entry);
    expect(await store.lookup(parent.id)).toBeNull();
    expect(await store.lookup(child.id)).toBeNull();
    expect(await store.lookup(grandchild.id)).toBeNull();
    expect(await store.lookup(orphan.id)).not.toBeNull();
  });

  it('finds tokens by accessor and rejects malformed accessors', async () => {
    const { store } = await setup();
    const { entry } = await store.create({ policies: ['p'] });
    expect((await store.lookupAccessor(entry.accessor))?.hash).toBe(entry.hash);
    expect(await store.lookupAccessor('../id/x')).toBeNull();
  });

  it('keeps tokens valid across a restart (new store on the same storage)', async () => {
    const { store, storage, clock } = await setup();
    const { id } = await store.create({ policies: ['p'] });
    const again = new TokenStore(storage, clock);
    await again.init();
    expect((await again.lookup(id))?.policies).toEqual(['p']);
    expect(await again.lookup(id + 'x')).toBeNull();
  });
});

describe('token store: revoke-orphan', () => {
  it('keeps children valid as orphans when the parent is revoked with orphanChildren', async () => {
    const { store } = await setup();
    const parent = await store.create({ policies: ['p'] });
    const child = await store.create({ policies: ['p'], parent_accessor: parent.entry.accessor });
    await store.revokeEntry(parent.entry, { orphanChildren: true });
    const c = await store.lookup(child.id);
    expect(c?.orphan).toBe(true);
    expect(c?.parent_accessor).toBe('');
  });
});

describe('batch tokens', () => {
  it('seal the entry with AES-256-GCM under the stored batch key (checked with @noble/ciphers), and store nothing', async () => {
    const { gcm } = await import('@noble/ciphers/aes.js');
    const { store, storage } = await setup();
    const keysBefore = await listAll(storage, '');
    const { id, entry } = await store.create({
      type: 'batch',
      policies: ['ci'],
      ttl: 600,
      orphan: true,
      meta: { repo: 'octo/app' },
      role: 'ci',
    });
    expect(await listAll(storage, '')).toEqual(keysBefore);
    expect(entry).toMatchObject({ type: 'batch', accessor: '', renewable: false, num_uses: 0 });
    const raw = Buffer.from(id.slice(4), 'base64url');
    expect(raw[0]).toBe(1);
    const key = (await storage.get('batch-key'))!;
    expect(key.length).toBe(32);
    // Independent implementation: version | nonce(12) | ciphertext | tag(16), AAD "keyhold batch token v1".
    const plain = gcm(key, raw.subarray(1, 13), Buffer.from('keyhold batch token v1')).decrypt(raw.subarray(13));
    const sealed = JSON.parse(Buffer.from(plain).toString('utf8'));
    expect(sealed).toMatchObject({ type: 'batch', policies: ['ci'], meta: { repo: 'octo/app' }, role: 'ci', ttl: 600 });
    expect(sealed.hash).toBeUndefined();
    expect((await store.lookup(id))!.policies).toEqual(['ci']);
  });

  it('are refused when forged with another key, damaged, expired, or after seal; renew and revoke throw', async () => {
    const { store, advance } = await setup();
    const { id } = await store.create({ type: 'batch', policies: ['ci'], ttl: 60, orphan: true });
    const other = await setup();
    expect(await other.store.lookup(id)).toBeNull(); // another install's key
    const raw = Buffer.from(id.slice(4), 'base64url');
    raw[raw.length - 20] ^= 1;
    expect(await store.lookup('hvb.' + raw.toString('base64url'))).toBeNull();
    const e = (await store.lookup(id))!;
    await expect(store.renew(e)).rejects.toThrow('batch tokens cannot be renewed');
    await expect(store.revokeEntry(e)).rejects.toThrow('batch tokens cannot be revoked');
    expect(await store.create({ type: 'batch', policies: ['root'] }).catch((x: Error) => x.message)).toBe(
      'batch tokens cannot be root tokens',
    );
    advance(60_000);
    expect(await store.lookup(id)).toBeNull();
    expect(store.cachedEntry(id)).toBeUndefined();
  });
});
