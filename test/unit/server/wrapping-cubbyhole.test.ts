// Response wrapping and cubbyholes in the core: the wrapped answer lives in the wrapping token's
// cubbyhole behind the barrier, and every cubbyhole goes with its token (revoked, unwrapped, expired).
import { describe, expect, it } from 'vitest';
import { InmemBackend } from '../../../src/storage/inmem.js';
import { Core } from '../../../src/server/core/core.js';
import { NoKeychain } from '../../../src/seal/keychain.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

async function core() {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const backend = new InmemBackend();
  const c = new Core({
    backend,
    keychain: new NoKeychain(),
    logger: quiet,
    maxRequestSize: 1 << 20,
    version: 't',
    clock: { now: () => now },
  });
  await c.init({ useKeychain: false });
  return { c, backend, advance: (ms: number) => (now += ms) };
}

/** Every record under the cubbyhole prefix, as the raw backend holds it. */
async function rawCubbyholeRecords(b: InmemBackend): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = [];
  const walk = async (p: string): Promise<void> => {
    for (const n of await b.list(p)) {
      if (n.endsWith('/')) await walk(p + n);
      else out.push([p + n, (await b.get(p + n))!.toString('latin1')]);
    }
  };
  await walk('');
  return out.filter(([k]) => k.includes('cubbyhole'));
}

describe('response wrapping in the core', () => {
  it('stores the answer encrypted (never in the clear), unwraps once and leaves nothing behind', async () => {
    const { c, backend } = await core();
    const info = await c.wrapping.wrap('{"data":{"password":"hunter2-secret"}}\n', 60, 'secret/data/x');
    const stored = await rawCubbyholeRecords(backend);
    expect(stored.length).toBe(2);
    for (const [, v] of stored) expect(v).not.toContain('hunter2-secret');
    expect(await c.wrapping.lookup(info.token)).toMatchObject({ creation_ttl: 60, creation_path: 'secret/data/x' });
    expect(await c.wrapping.unwrap(info.token)).toContain('hunter2-secret');
    await expect(c.wrapping.unwrap(info.token)).rejects.toThrow(/wrapping token is not valid or does not exist/);
    expect(await rawCubbyholeRecords(backend)).toEqual([]);
  });

  it('refuses a normal token as a wrapping token', async () => {
    const { c } = await core();
    const { id } = await c.tokens.create({ policies: ['default'] });
    await expect(c.wrapping.unwrap(id)).rejects.toThrow(/wrapping token is not valid/);
    await expect(c.wrapping.lookup(undefined)).rejects.toThrow(/wrapping token is not valid/);
  });

  it('sweeps the cubbyhole of a wrapping token nobody unwrapped, after its TTL', async () => {
    const { c, backend, advance } = await core();
    await c.wrapping.wrap('{"data":{"k":"v"}}\n', 30, 'sys/wrapping/wrap');
    await c.sweepCubbyholes();
    expect((await rawCubbyholeRecords(backend)).length).toBe(2);
    advance(31_000);
    await c.sweepCubbyholes();
    expect(await rawCubbyholeRecords(backend)).toEqual([]);
  });

  it("destroys a token's cubbyhole when the token (or its parent) is revoked", async () => {
    const { c, backend } = await core();
    const parent = await c.tokens.create({ policies: ['default'] });
    const child = await c.tokens.create({ policies: ['default'], parent_accessor: parent.entry.accessor });
    for (const t of [parent, child]) {
      const dir = c.tokens.hash(t.id) + '/';
      await c.cubbyholes.put(dir + 'note', Buffer.from('{"v":"x"}'));
    }
    expect((await rawCubbyholeRecords(backend)).length).toBe(2);
    await c.tokens.revokeEntry(parent.entry);
    expect(await rawCubbyholeRecords(backend)).toEqual([]);
  });

  it('rewraps into a new token with the original TTL and path; the old token stops working', async () => {
    const { c } = await core();
    const first = await c.wrapping.wrap('{"data":{"a":1}}\n', 120, 'secret/data/a');
    const second = await c.wrapping.rewrap(first.token);
    expect(second).toMatchObject({ ttl: 120, creation_path: 'secret/data/a' });
    await expect(c.wrapping.lookup(first.token)).rejects.toThrow(/not valid/);
    expect(await c.wrapping.unwrap(second.token)).toContain('"a":1');
  });
});
