/** Where the master key lives between runs: the OS keychain (Secret Service on Linux). */

/** A keychain holding secrets by account name. */
export interface Keychain {
  /** Stored secret or null; throws when no keychain answers. */
  get(account: string): Promise<Buffer | null>;
  set(account: string, secret: Buffer): Promise<void>;
  delete(account: string): Promise<void>;
  /** Short description for status output. */
  describe(): string;
}

/** A keychain that never answers (no OS keychain available, or disabled by config). */
export class NoKeychain implements Keychain {
  async get(): Promise<Buffer | null> {
    throw new Error('no keychain available');
  }
  async set(): Promise<void> {
    throw new Error('no keychain available');
  }
  async delete(): Promise<void> {}
  describe(): string {
    return 'none';
  }
}
