/**
 * Barrier key rotation (Vault's sys/rotate, sys/key-status, sys/rotate/config; vault/barrier_aes_gcm.go
 * Rotate, vault/keyring.go). The keyring is a list of terms; new records are sealed under the newest
 * term and every older term still opens what it sealed (records name their term: barrier-terms.ts).
 *
 * Where the terms live: `core/keyring-terms`, outside the barrier's normal path, sealed with the key
 * of term 1 (which is itself kept under the master key in core/keyring). So a rekey or seal migration,
 * which re-wraps core/keyring, carries every term along untouched, and a store that was never rotated
 * has no such record. What this does not give: a leaked term-1 key opens the later keys too. Rotation
 * here bounds how much one key encrypts (GCM's nonce budget, Vault's reason for max_operations); a
 * suspected key leak is answered by `operator rekey` plus rotation, see docs/operations.md.
 *
 * Automatic rotation (Vault's defaults: enabled, 3,865,470,566 operations, no interval) runs on the
 * node that writes (single daemon or cluster active); a standby that meets a record of an unknown term
 * re-reads the keyring before opening it (Barrier.onUnknownTerm), so it never serves such a record blind.
 */
import { randomBytes } from 'node:crypto';
import type { Backend } from './backend.js';
import { openRecord, sealRecord, type Barrier } from './barrier.js';

/** Time source (storage depends on nothing of ours: the shape of framework's Clock). */
interface Clock {
  now(): number;
}

/** Log sink (the shape of framework's Logger that this file uses). */
interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Where the keyring of terms is stored (sealed under term 1's key). */
export const TERMS_PATH = 'core/keyring-terms';

/** Vault's default max_operations before an automatic rotation (vault/barrier.go: 2^32 * 0.9 rounded). */
export const DEFAULT_MAX_OPERATIONS = 3_865_470_566;
/** Vault's smallest rotation interval (24h); 0 turns interval rotation off. */
export const MIN_INTERVAL_SECONDS = 24 * 3600;

/** sys/rotate/config. */
export interface RotationConfig {
  enabled: boolean;
  max_operations: number;
  /** Seconds; 0 = no interval rotation. */
  interval: number;
}

interface StoredTerm {
  term: number;
  key: string;
  install_time: string;
  encryptions: number;
}

interface StoredKeyring {
  version: 1;
  active: number;
  terms: StoredTerm[];
  rotation: RotationConfig;
}

/** sys/key-status. */
export interface KeyStatus {
  term: number;
  install_time: string;
  encryptions: number;
}

/** How often the active node saves the encryption count and checks the rotation rules. */
const CHECK_MS = 10_000;

/** The keyring of barrier key terms of one daemon. */
export class BarrierKeyring {
  private stored: StoredKeyring | null = null;
  /** Encryptions counted before the barrier's counter (loaded from storage). */
  private baseEncryptions = 0;
  private timer: NodeJS.Timeout | null = null;
  private busy: Promise<unknown> = Promise.resolve();
  private reloading: Promise<void> | null = null;

  constructor(
    private readonly backend: Backend,
    private readonly barrier: Barrier,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly onRotated: (term: number) => void = () => {},
  ) {
    barrier.onUnknownTerm = () => this.reload();
  }

  /** Read the terms after unseal and install them in the barrier (nothing stored: term 1 only). */
  async load(): Promise<void> {
    const rec = await this.backend.get(TERMS_PATH);
    if (!rec) {
      // No keyring of terms stored (never rotated, or an older snapshot was restored): term 1 only.
      this.barrier.resetTerms();
      this.stored = null;
      this.baseEncryptions = 0;
      return;
    }
    const s = JSON.parse(openRecord(this.barrier.firstTermKey(), TERMS_PATH, rec).toString('utf8')) as StoredKeyring;
    this.stored = s;
    const keys = new Map(s.terms.map((t) => [t.term, Buffer.from(t.key, 'base64')]));
    const active = s.terms.find((t) => t.term === s.active)!;
    const before = this.barrier.activeTerm;
    this.barrier.installTerms(keys, s.active);
    for (const k of keys.values()) k.fill(0);
    if (before !== s.active) this.barrier.encryptions = 0;
    this.baseEncryptions = active.encryptions;
  }

  /** Re-read the terms (a record names a term another node installed). Concurrent callers share one read. */
  reload(): Promise<void> {
    this.reloading ??= this.load().finally(() => (this.reloading = null));
    return this.reloading;
  }

  private firstTermInstall(): string {
    return this.stored?.terms.find((t) => t.term === 1)?.install_time ?? '';
  }

  /** sys/key-status: the active term, when it was installed, and what it has encrypted. */
  status(initializedTime: string): KeyStatus {
    const term = this.barrier.activeTerm;
    const t = this.stored?.terms.find((x) => x.term === term);
    return {
      term,
      install_time: t?.install_time ?? (this.firstTermInstall() || initializedTime),
      encryptions: this.baseEncryptions + this.barrier.encryptions,
    };
  }

  /** sys/rotate/config (Vault's defaults until written). */
  config(): RotationConfig {
    return this.stored?.rotation ?? { enabled: true, max_operations: DEFAULT_MAX_OPERATIONS, interval: 0 };
  }

  /** Serialise changes to the stored keyring (rotation, config, count saves). */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.busy.then(fn, fn);
    this.busy = run.catch(() => {});
    return run;
  }

  /** The stored keyring as it stands now (term 1 only when never written). */
  private current(initializedTime: string): StoredKeyring {
    if (this.stored) return this.stored;
    const first = this.barrier.firstTermKey();
    return {
      version: 1,
      active: 1,
      terms: [{ term: 1, key: first.toString('base64'), install_time: initializedTime, encryptions: 0 }],
      rotation: this.config(),
    };
  }

  /** Store `s` with the active term's count brought up to date (the barrier's counter starts over). */
  private async saveCounted(s: StoredKeyring): Promise<StoredKeyring> {
    const next = this.withCount(s);
    const pending = this.barrier.encryptions;
    await this.save(next);
    this.baseEncryptions = next.terms.find((t) => t.term === next.active)!.encryptions;
    this.barrier.encryptions -= pending;
    return next;
  }

  private async save(next: StoredKeyring): Promise<void> {
    const plain = Buffer.from(JSON.stringify(next), 'utf8');
    try {
      await this.backend.put(TERMS_PATH, sealRecord(this.barrier.firstTermKey(), TERMS_PATH, plain));
    } finally {
      plain.fill(0);
    }
    this.stored = next;
  }

  /** The active term's count as it is to be saved. */
  private withCount(s: StoredKeyring): StoredKeyring {
    const count = this.baseEncryptions + this.barrier.encryptions;
    return { ...s, terms: s.terms.map((t) => (t.term === s.active ? { ...t, encryptions: count } : t)) };
  }

  /** sys/rotate: install a new term; new records are sealed under it at once. Returns the new term. */
  rotate(initializedTime: string): Promise<number> {
    return this.exclusive(async () => {
      // Another node may have rotated since we loaded: start from what is stored.
      await this.load();
      const cur = this.withCount(this.current(initializedTime));
      const term = Math.max(...cur.terms.map((t) => t.term)) + 1;
      const key = randomBytes(32);
      const next: StoredKeyring = {
        ...cur,
        active: term,
        terms: [
          ...cur.terms,
          { term, key: key.toString('base64'), install_time: new Date(this.clock.now()).toISOString(), encryptions: 0 },
        ],
      };
      // Stored first: a crash after this write leaves the new term in place, never a record under a term not stored.
      await this.save(next);
      const keys = new Map(next.terms.map((t) => [t.term, Buffer.from(t.key, 'base64')]));
      this.barrier.installTerms(keys, term);
      for (const k of keys.values()) k.fill(0);
      key.fill(0);
      this.baseEncryptions = 0;
      this.barrier.encryptions = 0;
      this.logger.info('barrier key rotated', { term });
      this.onRotated(term);
      return term;
    });
  }

  /** sys/rotate/config (write). */
  setConfig(change: Partial<RotationConfig>, initializedTime: string): Promise<RotationConfig> {
    return this.exclusive(async () => {
      await this.load();
      const cur = this.current(initializedTime);
      const rotation = { ...cur.rotation, ...change };
      await this.saveCounted({ ...cur, rotation });
      return rotation;
    });
  }

  /** Save the encryption count and rotate when a rule says so (active node, on a timer). */
  async check(initializedTime: string): Promise<void> {
    const cfg = this.config();
    const st = this.status(initializedTime);
    const due =
      cfg.enabled &&
      ((cfg.max_operations > 0 && st.encryptions >= cfg.max_operations) ||
        (cfg.interval > 0 &&
          st.install_time !== '' &&
          this.clock.now() - Date.parse(st.install_time) >= cfg.interval * 1000));
    if (due) {
      await this.rotate(initializedTime);
      return;
    }
    await this.saveCount();
  }

  /** The count survives restarts (saved when it moved; nothing written for a store never rotated or configured). */
  private async saveCount(): Promise<void> {
    if (!this.stored || this.barrier.encryptions <= 0) return;
    await this.exclusive(async () => {
      if (this.stored) await this.saveCounted(this.stored);
    });
  }

  /** Start the automatic checks; `writes()` says whether this node may write now (not a standby). */
  start(writes: () => boolean, initializedTime: () => string): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (!writes()) return;
      this.check(initializedTime()).catch((e: unknown) =>
        this.logger.error('barrier key rotation check failed', { error: (e as Error)?.message }),
      );
    }, CHECK_MS);
    this.timer.unref();
  }

  /** Stop the checks (seal). The count is saved when this node may write. */
  async stop(writes: boolean): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (writes)
      await this.saveCount().catch((e: unknown) =>
        this.logger.warn('could not save the barrier encryption count', { error: (e as Error)?.message }),
      );
    this.stored = null;
    this.baseEncryptions = 0;
  }
}

/** What `attachBarrierKeyring` needs of the core. */
export interface KeyringHost {
  readonly backend: Backend;
  readonly barrier: Barrier;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The core's lifecycle events. */
  readonly events: { on(topic: 'after-unseal' | 'before-seal', listener: () => void | Promise<void>): () => void };
  isStandby(): boolean;
  readonly sealConfig: { initialized_time: string } | null;
}

/** The keyring of terms for a core: loaded after unseal (attach it first), checked while unsealed, saved at seal. */
export function attachBarrierKeyring(host: KeyringHost): BarrierKeyring {
  const ring = new BarrierKeyring(host.backend, host.barrier, host.clock, host.logger);
  const initialized = () => host.sealConfig?.initialized_time ?? '';
  host.events.on('after-unseal', async () => {
    await ring.load();
    ring.start(() => !host.isStandby(), initialized);
  });
  host.events.on('before-seal', () => ring.stop(!host.isStandby()));
  return ring;
}
