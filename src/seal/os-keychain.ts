/**
 * OS keychain via @napi-rs/keyring (prebuilt binaries; Secret Service on Linux, Keychain on macOS,
 * Credential Manager on Windows). keytar was rejected: archived repository, native build only.
 * Secrets are stored base64-encoded as the entry's password under service "keyhold".
 */
import type { Keychain } from './keychain.js';

const SERVICE = 'keyhold';
/** A keychain that does not answer within this time counts as absent (D-Bus activation can hang). */
const DEFAULT_TIMEOUT_MS = 10_000;

type EntryCtor = new (
  service: string,
  user: string,
  options?: Record<string, unknown>,
) => {
  setPassword(p: string, signal?: AbortSignal): Promise<void>;
  getPassword(signal?: AbortSignal): Promise<string | null>;
  deleteCredential?(signal?: AbortSignal): Promise<boolean>;
  deletePassword?(signal?: AbortSignal): Promise<boolean>;
};

/** Keychain backed by the OS store (Linux: Secret Service over D-Bus). */
export class OsKeychain implements Keychain {
  private ctor: EntryCtor | null = null;
  constructor(
    private readonly service = SERVICE,
    private readonly timeoutMs = DEFAULT_TIMEOUT_MS,
  ) {}

  private async entry(account: string) {
    if (!this.ctor) {
      const mod = (await import('@napi-rs/keyring')) as unknown as { AsyncEntry: EntryCtor };
      this.ctor = mod.AsyncEntry;
    }
    // On Linux pin the store to the Secret Service (not the kernel keyutils, which forgets at reboot).
    // Requiring a store that is unavailable throws instead of silently falling back.
    return new this.ctor(this.service, account, { linux: { store: 'secret-service' } });
  }

  /** Run one keychain call with a deadline; errors keep only the library's message (never the secret). */
  private async call<T>(what: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const ac = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        ac.abort();
        reject(new Error(`keychain ${what}: no answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      timer.unref();
    });
    try {
      return await Promise.race([fn(ac.signal), deadline]);
    } catch (e) {
      const msg = (e as Error)?.message ?? String(e);
      throw new Error(msg.startsWith('keychain ') ? msg : `keychain ${what}: ${msg.split('\n')[0]}`);
    } finally {
      clearTimeout(timer);
    }
  }

  async get(account: string): Promise<Buffer | null> {
    const p = await this.call('read', async (signal) => (await this.entry(account)).getPassword(signal));
    return p === null ? null : Buffer.from(p, 'base64');
  }
  async set(account: string, secret: Buffer): Promise<void> {
    await this.call('write', async (signal) =>
      (await this.entry(account)).setPassword(secret.toString('base64'), signal),
    );
  }
  async delete(account: string): Promise<void> {
    await this.call('delete', async (signal) => {
      const e = await this.entry(account);
      await (e.deleteCredential ?? e.deletePassword)?.call(e, signal);
    });
  }
  describe(): string {
    return process.platform === 'linux'
      ? 'secret-service'
      : process.platform === 'darwin'
        ? 'macos-keychain'
        : 'os-keychain';
  }
}
