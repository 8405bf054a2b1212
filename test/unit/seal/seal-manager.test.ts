import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { combineShares, decodeKeyText, shareConfigError, splitKey } from '../../../src/seal/shamir.js';
import { SealManager } from '../../../src/seal/seal-manager.js';
import { effectiveStanzas, normalizeSealConfig, transitSettings } from '../../../src/seal/seal-config.js';
import { pkcs11Settings } from '../../../src/seal/pkcs11-seal.js';
import { forgetPreviousKeyring, openKeyring, rewrapKeyring, type SealBlob } from '../../../src/seal/seal.js';
import type { SealWrapper } from '../../../src/seal/wrapper.js';
import { InmemBackend } from '../../../src/storage/inmem.js';
import { NoKeychain } from '../../../src/seal/keychain.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** A seal that XORs with a fixed pad: enough to exercise the manager's bookkeeping, not crypto. */
function fakeSeal(type: string, pad = randomBytes(64)): SealWrapper & { calls: number } {
  const w = {
    type,
    calls: 0,
    async encrypt(pt: Buffer): Promise<SealBlob> {
      w.calls++;
      return {
        seal_type: type,
        key_id: 'k1',
        ciphertext: Buffer.from(pt.map((b, i) => b ^ pad[i]!)).toString('base64'),
      };
    },
    async decrypt(blob: SealBlob): Promise<Buffer> {
      w.calls++;
      const ct = Buffer.from(blob.ciphertext, 'base64');
      return Buffer.from(ct.map((b, i) => b ^ pad[i]!));
    },
  };
  return w;
}

describe('shamir helpers', () => {
  it('splits with Vault layout and combines from any threshold subset; one share is the key itself', async () => {
    const key = randomBytes(32);
    const parts = await splitKey(key, 5, 3);
    expect(parts.map((p) => p.length)).toEqual([33, 33, 33, 33, 33]);
    expect((await combineShares([parts[4]!, parts[0]!, parts[2]!], 3)).equals(key)).toBe(true);
    expect((await combineShares([parts[1]!, parts[3]!], 2)).equals(key)).toBe(false);
    const one = await splitKey(key, 1, 1);
    expect(one).toHaveLength(1);
    expect(one[0]!.equals(key)).toBe(true);
    expect(one[0]).not.toBe(key);
  });

  it("validates share configs with Vault's messages and decodes keys as Vault's HTTP layer", () => {
    expect(shareConfigError({ secret_shares: 5, secret_threshold: 3 })).toBeNull();
    expect(shareConfigError({ secret_shares: 1, secret_threshold: 1 })).toBeNull();
    expect(shareConfigError({ secret_shares: 2, secret_threshold: 1 })).toBe(
      'threshold must be greater than one for multiple shares',
    );
    expect(shareConfigError({ secret_shares: 0, secret_threshold: 0 })).toBe('shares must be at least one');
    expect(shareConfigError({ secret_shares: 300, secret_threshold: 2 })).toBe('shares must be less than 256');
    const k = randomBytes(33);
    expect(decodeKeyText(k.toString('hex')).equals(k)).toBe(true);
    expect(decodeKeyText(k.toString('base64')).equals(k)).toBe(true);
    // 8 hex bytes are too short for hex: read as base64 instead (Vault's rule).
    expect(decodeKeyText('00112233').length).toBe(6);
    expect(() => decodeKeyText('!!')).toThrow(/valid hex or base64/);
  });
});

describe('keyring rewrap (rekey, migration)', () => {
  it('keeps the previous keyring openable with the old key until it is forgotten', async () => {
    const b = new InmemBackend();
    const m = new SealManager(b, new NoKeychain(), quiet);
    const { master } = await m.initialize({ useKeychain: false });
    const barrier = await openKeyring(b, master);
    const fresh = randomBytes(32);
    await rewrapKeyring(b, barrier, fresh);
    expect((await openKeyring(b, fresh)).equals(barrier)).toBe(true);
    expect((await openKeyring(b, master)).equals(barrier)).toBe(true); // crash window: both open
    await forgetPreviousKeyring(b);
    await expect(openKeyring(b, master)).rejects.toThrow(/invalid key/);
  });
});

describe('SealManager on shared storage', () => {
  it('a daemon started before another initialised the storage sees it after refresh, and a rekey there', async () => {
    const b = new InmemBackend();
    const a = new SealManager(b, new NoKeychain(), quiet);
    const late = new SealManager(b, new NoKeychain(), quiet);
    await late.load();
    expect(late.config).toBeNull();
    const out = await a.initialize({ useKeychain: false, secret_shares: 3, secret_threshold: 2 });
    await late.refresh();
    expect(late.status()).toMatchObject({ t: 2, n: 3 });
    await late.submitUnsealKey(out.keys[0]!, false);
    expect((await late.submitUnsealKey(out.keys[1]!, false))!.equals(out.master)).toBe(true);
  });
});

describe('SealManager with an auto seal', () => {
  it('init wraps master and recovery keys; storedMaster unwraps; recovery shares are verified against the stored key', async () => {
    const b = new InmemBackend();
    const seal = fakeSeal('transit');
    const m = new SealManager(b, new NoKeychain(), quiet, { active: seal, disabled: null });
    expect(m.status()).toMatchObject({ type: 'transit', recovery_seal: true, t: 0, n: 0 });
    await expect(m.initialize({ useKeychain: false, secret_shares: 3, secret_threshold: 2 })).rejects.toThrow(
      'parameters secret_shares,secret_threshold not applicable to seal type transit',
    );
    const out = await m.initialize({ useKeychain: false, recovery_shares: 3, recovery_threshold: 2 });
    expect(out.keys).toEqual([]);
    expect(out.recoveryKeys).toHaveLength(3);
    expect(m.status()).toMatchObject({ type: 'transit', t: 2, n: 3, recovery_seal_type: 'shamir' });

    const m2 = new SealManager(b, new NoKeychain(), quiet, { active: seal, disabled: null });
    await m2.load();
    expect((await m2.storedMaster())!.equals(out.master)).toBe(true);
    expect(await m2.submitUnsealKey(out.recoveryKeys[2]!, false)).toBeNull();
    const master = await m2.submitUnsealKey(out.recoveryKeys[0]!, false);
    expect(master!.equals(out.master)).toBe(true);
    // A recovery key of another store fails verification.
    const other = await splitKey(randomBytes(32), 3, 2);
    await m2.submitUnsealKey(other[0]!, false);
    await expect(m2.submitUnsealKey(other[1]!, false)).rejects.toThrow(/failed to verify recovery key/);
  });

  it('refuses to load when storage uses a seal the config does not name, and migrates when it names it disabled', async () => {
    const b = new InmemBackend();
    const t = fakeSeal('transit');
    const m = new SealManager(b, new NoKeychain(), quiet, { active: t, disabled: null });
    const out = await m.initialize({ useKeychain: false, recovery_shares: 1, recovery_threshold: 1 });
    await expect(new SealManager(b, new NoKeychain(), quiet).load()).rejects.toThrow(
      /storage is sealed by seal "transit".*disabled = "true"/,
    );
    const back = new SealManager(b, new NoKeychain(), quiet, { active: null, disabled: t });
    await back.load();
    expect(back.status()).toMatchObject({ type: 'transit', migration: true });
    expect(await back.storedMaster()).toBeNull(); // no unattended unseal during a migration
    await expect(back.submitUnsealKey(out.recoveryKeys[0]!, false)).rejects.toThrow(
      'migrate option not provided and seal migration is pending',
    );
    const master = await back.submitUnsealKey(out.recoveryKeys[0]!, true);
    // auto -> shamir: the recovery key is the new unseal (master) key.
    expect(master!.equals(out.recoveryKeys[0]!)).toBe(true);
    expect(back.status()).toMatchObject({ type: 'shamir', migration: false, recovery_seal: false, t: 1, n: 1 });
    expect(await b.get('core/hsm/barrier-unseal-keys')).toBeNull();
    expect((await openKeyring(b, out.recoveryKeys[0]!)).length).toBe(32);
  });
});

describe('SealManager: one auto seal to another', () => {
  it('re-wraps the master and recovery keys with the new seal; the old one is no longer needed', async () => {
    const b = new InmemBackend();
    const oldSeal = fakeSeal('transit');
    const out = await new SealManager(b, new NoKeychain(), quiet, { active: oldSeal, disabled: null }).initialize({
      useKeychain: false,
      recovery_shares: 2,
      recovery_threshold: 2,
    });
    const newSeal = fakeSeal('pkcs11');
    const m = new SealManager(b, new NoKeychain(), quiet, { active: newSeal, disabled: oldSeal });
    await m.load();
    expect(m.status()).toMatchObject({ type: 'transit', migration: true, t: 2, n: 2 });
    await m.submitUnsealKey(out.recoveryKeys[0]!, true);
    const master = await m.submitUnsealKey(out.recoveryKeys[1]!, true);
    expect(master!.equals(out.master)).toBe(true);
    expect(m.status()).toMatchObject({ type: 'pkcs11', migration: false, recovery_seal: true });
    // Only the new seal is needed from now on, and the recovery key still verifies.
    const after = new SealManager(b, new NoKeychain(), quiet, { active: newSeal, disabled: null });
    await after.load();
    expect((await after.storedMaster())!.equals(out.master)).toBe(true);
    await after.submitUnsealKey(out.recoveryKeys[1]!, false);
    expect((await after.submitUnsealKey(out.recoveryKeys[0]!, false))!.equals(out.master)).toBe(true);
  });
});

describe('seal config', () => {
  it('accepts {type, params}, Vault JSON form and two stanzas with one disabled; refuses the rest', () => {
    expect(normalizeSealConfig({ type: 'transit', params: { key_name: 'k' } })).toEqual([
      { type: 'transit', params: { key_name: 'k' } },
    ]);
    expect(normalizeSealConfig({ transit: { key_name: 'k' } })).toEqual([
      { type: 'transit', params: { key_name: 'k' } },
    ]);
    expect(
      normalizeSealConfig([
        { type: 'transit', params: { disabled: 'true' } },
        { type: 'pkcs11', params: {} },
      ]),
    ).toHaveLength(2);
    expect(
      normalizeSealConfig([
        { type: 'transit', params: {} },
        { type: 'pkcs11', params: {} },
      ]),
    ).toMatch(/only one seal may be enabled/);
    expect(normalizeSealConfig({ type: 'awskms', params: {} })).toMatch(/not supported/);
    expect(effectiveStanzas([], { VAULT_SEAL_TYPE: 'transit' })).toEqual([{ type: 'transit', params: {} }]);
    expect(effectiveStanzas([], { VAULT_SEAL_TYPE: 'shamir' })).toEqual([]);
  });

  it("resolves transit parameters with Vault's environment precedence", () => {
    const p = { address: 'http://a:8200', token: 'cfg', key_name: 'k', mount_path: '/transit/' };
    expect(transitSettings(p, {})).toMatchObject({
      address: 'http://a:8200',
      token: 'cfg',
      keyName: 'k',
      mountPath: 'transit',
    });
    expect(transitSettings(p, { VAULT_TRANSIT_SEAL_TOKEN: 'env', TRANSIT_WRAPPER_ADDR: 'https://b:1' })).toMatchObject({
      token: 'env',
      address: 'https://b:1',
    });
    expect(
      transitSettings({ key_name: 'k', mount_path: 't' }, { VAULT_ADDR: 'http://v:1', VAULT_TOKEN: 'vt' }),
    ).toMatchObject({ address: 'http://v:1', token: 'vt' });
    expect(() => transitSettings({ mount_path: 't', token: 'x' }, {})).toThrow('key_name is required');
    expect(() => transitSettings({ key_name: 'k', token: 'x' }, {})).toThrow('mount_path is required');
    expect(() => transitSettings({ key_name: 'k', mount_path: 't', token: 'x', disable_renewal: 'maybe' }, {})).toThrow(
      /disable_renewal must be a boolean/,
    );
  });

  it('resolves pkcs11 parameters: VAULT_HSM_* first, Vault defaults, clear refusals', () => {
    const p = { lib: '/x.so', token_label: 'T', pin: 'cfg-pin', key_label: 'k' };
    expect(pkcs11Settings(p, {})).toMatchObject({
      lib: '/x.so',
      tokenLabel: 'T',
      pin: 'cfg-pin',
      keyLabel: 'k',
      mechanism: '0x1087',
      generateKey: false,
      maxParallel: 1,
      rsaOaepHash: 'sha256',
    });
    expect(
      pkcs11Settings(p, { VAULT_HSM_PIN: 'env-pin', VAULT_HSM_MECHANISM: '0x0009', VAULT_HSM_GENERATE_KEY: 'true' }),
    ).toMatchObject({ pin: 'env-pin', mechanism: '0x0009', generateKey: true });
    expect(
      pkcs11Settings({}, { VAULT_HSM_LIB: '/y.so', VAULT_HSM_SLOT: '3', VAULT_HSM_PIN: 'p', VAULT_HSM_KEY_LABEL: 'l' }),
    ).toMatchObject({ lib: '/y.so', slot: '3' });
    expect(() => pkcs11Settings({ ...p, lib: '' }, {})).toThrow(/lib is required/);
    expect(() => pkcs11Settings({ ...p, token_label: '' }, {})).toThrow(/slot or token_label is required/);
    expect(() => pkcs11Settings({ ...p, pin: '' }, {})).toThrow(/pin is required/);
    expect(() => pkcs11Settings({ ...p, mechanism: '0x1085' }, {})).toThrow(/mechanism "0x1085" is not supported/);
    // The pin never appears in an error.
    try {
      pkcs11Settings({ ...p, slot: 'x' }, {});
    } catch (e) {
      expect((e as Error).message).not.toContain('cfg-pin');
    }
  });
});
