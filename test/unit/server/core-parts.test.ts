// The core is a composition root: the internal engines are given bags of its parts (never the core
// itself), and the lifecycle moments are events on its bus, awaited in order.
import { describe, expect, it } from 'vitest';
import { InmemBackend } from '../../../src/storage/inmem.js';
import { Core } from '../../../src/server/core/core.js';
import { NoKeychain } from '../../../src/seal/keychain.js';
import { sysEngine } from '../../../src/server/sys-engine.js';
import { tokenEngine } from '../../../src/engines/sys/token-routes.js';
import { identityEngine } from '../../../src/engines/sys/identity-routes.js';
import type { SysParts } from '../../../src/engines/sys/sys-parts.js';
import type { EngineEnv } from '../../../src/framework/context.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const newCore = () =>
  new Core({
    backend: new InmemBackend(),
    keychain: new NoKeychain(),
    logger: quiet,
    maxRequestSize: 1 << 20,
    version: 't',
  });

describe('the core as parts', () => {
  it('serves sys/ with a bag of its parts, the same bag while sealed and unsealed', async () => {
    const core = newCore();
    const sealed = core.resolve('sys/seal-status')!.instance as SysParts;
    expect(sealed).not.toBe(core);
    expect(sealed.seal).toBe(core.sealState);
    expect(sealed.seal.isSealed()).toBe(true);
    await core.init({ useKeychain: false });
    const sys = core.resolve('sys/mounts')!.instance as SysParts;
    expect(sys).toBe(sealed);
    expect(sys.mounts).toBe(core.mountTable);
    expect(sys.access).toBe(core.access);
    expect(sys.cluster).toBe(core.role);
    expect(sys.tokens).toBe(core.tokens);
    expect(sys.seal.isSealed()).toBe(false);
    // What the routes do through the bag changes the core.
    await sys.mounts.mount('transit', 'transit', {});
    expect(core.findMount('transit/')?.type).toBe('transit');
    await sys.seal.seal();
    expect(core.isSealed()).toBe(true);
  });

  it('gives the token engine only the token parts', async () => {
    const core = newCore();
    await core.init({ useKeychain: false });
    const parts = core.resolve('auth/token/create')!.instance as Record<string, unknown>;
    expect(Object.keys(parts).sort()).toEqual(['clock', 'identity', 'policies', 'tokenRoles', 'tokens']);
    expect(parts.tokens).toBe(core.tokens);
    // Token lookups answer the entity's identity policies.
    expect(parts.identity).toBe(core.identity);
  });

  it('builds the identity engine on the identity store of the core, and closes it at seal', async () => {
    const core = newCore();
    await core.init({ useKeychain: false });
    const engine = core.resolve('identity/entity/id')!.instance as { identity: unknown; close(): Promise<void> };
    expect(engine.identity).toBe(core.identity);
    let closed = 0;
    const close = engine.close.bind(engine);
    engine.close = async () => {
      closed++;
      await close();
    };
    await core.seal();
    expect(closed).toBe(1);
  });

  it('refuses to create an internal engine without the core handing over its parts', async () => {
    await expect(sysEngine.create({} as EngineEnv)).rejects.toThrow(/mounted by the core with its parts/);
    await expect(tokenEngine.create({} as EngineEnv)).rejects.toThrow(/mounted by the core with its parts/);
    await expect(identityEngine.create({} as EngineEnv)).rejects.toThrow(/mounted by the core with its parts/);
  });
});

describe('lifecycle events of the core', () => {
  it('emits after-unseal once unsealed and before-seal while still unsealed', async () => {
    const core = newCore();
    const seen: string[] = [];
    core.events.on('after-unseal', async () => void seen.push(`after-unseal sealed=${core.isSealed()}`));
    core.events.on('before-seal', async () => void seen.push(`before-seal sealed=${core.isSealed()}`));
    await core.init({ useKeychain: false });
    await core.seal();
    expect(seen).toEqual(['after-unseal sealed=false', 'before-seal sealed=false']);
    expect(core.isSealed()).toBe(true);
  });

  it('runs before-init before anything is written, and a refusal leaves storage uninitialised', async () => {
    const core = newCore();
    core.events.on('before-init', async () => {
      throw new Error('another node of this cluster holds the lock: initialise through it');
    });
    await expect(core.init({ useKeychain: false })).rejects.toThrow(/holds the lock/);
    expect(core.isInitialized()).toBe(false);
    expect(core.isSealed()).toBe(true);
  });
});
