/**
 * OS keychain via @napi-rs/keyring (prebuilt binaries; Secret Service on Linux, Keychain on macOS,
 * Credential Manager on Windows). keytar was rejected: archived repository, native build only.
 * Secrets are stored base64-encoded as the entry's password under service "keyhold".
 */
import type { Keychain } from './keychain.js';

const SERVICE = 'keyhold';

type EntryCtor = new (service: string, user: string, options?: Record<string, unknown>) => {
  setPassword(p: string): Promise<void>;
  getPassword(): Promise<string | null>;
  deletePassword?(): Promise<boolean>;
  deleteCredential?(): Promise<boolean>;
};

/** Keychain backed by the OS store (Linux: Secret Service over D-Bus). */
export class OsKeychain implements Keychain {
  private ctor: EntryCtor | null = null;
  constructor(private readonly service = SERVICE) {}

  private async entry(account: string) {
    if (!this.ctor) {
      const mod = (await import('@napi-rs/keyring')) as unknown as { AsyncEntry: EntryCtor };
      this.ctor = mod.AsyncEntry;
    }
    // On Linux pin the store to the Secret Service (not the kernel keyutils, which forgets at reboot).
    // Requiring a store that is unavailable throws instead of silently falling back.
    return new this.ctor(this.service, account, { linux: { store: 'secret-service' } });
  }

  async get(account: string): Promise<Buffer | null> {
    const p = await (await this.entry(account)).getPassword();
    return p === null ? null : Buffer.from(p, 'base64');
  }
  async set(account: string, secret: Buffer): Promise<void> {
    await (await this.entry(account)).setPassword(secret.toString('base64'));
  }
  async delete(account: string): Promise<void> {
    const e = await this.entry(account);
    await (e.deletePassword ?? e.deleteCredential)?.call(e);
  }
  describe(): string {
    return process.platform === 'linux' ? 'secret-service' : process.platform === 'darwin' ? 'macos-keychain' : 'os-keychain';
  }
}
