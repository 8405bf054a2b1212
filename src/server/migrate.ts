/**
 * `keyhold operator migrate -config migrate.hcl` (Vault's command, cluster-wire.md §6): copy every
 * record, as stored (barrier ciphertext, no decryption), from `storage_source` to
 * `storage_destination`, between any two of file, postgresql (and inmem, for tests).
 *
 * Safety as Vault: a `core/migration` lock record ({"start": RFC 3339}) is written to the source
 * while copying and a server refuses to start on storage that carries it; `core/migration` and
 * `core/lock` are not copied; `-reset` removes a stale lock. Beyond Vault, the command refuses a
 * source a server is running on (file: the storage lock file names a live process; postgresql: a
 * keyhold session is connected) and a destination that is already initialised.
 */
import { readFileSync } from 'node:fs';
import { HclSyntaxError, parseHcl } from '../framework/hcl.js';
import { listAll, type Backend } from '../storage/backend.js';
import { FileBackend } from '../storage/file.js';
import { InmemBackend } from '../storage/inmem.js';
import { PostgresBackend } from '../storage/postgres.js';
import { At, ConfigError } from './config-values.js';
import { storageStanza, type StorageConfig } from './config-storage.js';

/** Record that marks a migration in progress (in the source). */
export const MIGRATION_KEY = 'core/migration';
const SKIP = new Set([MIGRATION_KEY, 'core/lock']);

/** Parsed migrate.hcl. */
export interface MigrationConfig {
  source: StorageConfig;
  destination: StorageConfig;
}

/** Read migrate.hcl (storage_source and storage_destination stanzas); errors name file, line and key. */
export function loadMigrationConfig(path: string): MigrationConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`config ${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  let doc;
  try {
    doc = parseHcl(text);
  } catch (e) {
    if (e instanceof HclSyntaxError)
      throw new ConfigError(`config ${path}:${e.line}: syntax error: ${e.reason} (column ${e.column})`);
    throw e;
  }
  const out: Partial<MigrationConfig> = {};
  for (const item of doc.items) {
    const at = new At(path, item.line, item.key);
    if (item.key === 'storage_source' || item.key === 'storage_destination') {
      const which = item.key === 'storage_source' ? 'source' : 'destination';
      if (out[which]) at.fail('given twice');
      out[which] = storageStanza(item, at, {});
    } else if (item.key !== 'cluster_addr') {
      at.fail('unknown key (allowed: storage_source, storage_destination, cluster_addr)');
    }
  }
  if (!out.source) throw new ConfigError(`config ${path}: storage_source: missing (storage_source "<type>" { ... })`);
  if (!out.destination)
    throw new ConfigError(`config ${path}: storage_destination: missing (storage_destination "<type>" { ... })`);
  return out as MigrationConfig;
}

/** An opened backend for migration (postgresql without HA: nothing competes for a lock here). */
async function openBackend(c: StorageConfig, role: 'source' | 'destination'): Promise<Backend> {
  if (c.type === 'inmem') return new InmemBackend();
  if (c.type === 'postgresql') {
    const b = new PostgresBackend({ ...(c.params ?? {}), ha_enabled: 'false' }, { listen: false });
    try {
      await b.open();
    } catch (e) {
      await b.close().catch(() => {});
      throw new MigrationError(`${role}: ${(e as Error).message}`);
    }
    if (role === 'source') {
      const others = await b.otherKeyholdSessions();
      if (others > 0) {
        await b.close();
        throw new MigrationError(
          `source: a keyhold server is connected to ${b.describe()} (${others} session(s)); stop every server on the source first`,
        );
      }
    }
    return b;
  }
  const fb = new FileBackend(c.path!);
  try {
    fb.openSync(); // the storage lock: refuses a source (or destination) a server has open
  } catch (e) {
    throw new MigrationError(`${role}: ${(e as Error).message}`);
  }
  return fb;
}

/** A migration failure (exit 2). */
export class MigrationError extends Error {}

/** Options of `operator migrate`. */
export interface MigrateOptions {
  /** Copy only keys >= this (resume a halted run). */
  start?: string;
  reset?: boolean;
  maxParallel?: number;
  log?: (line: string) => void;
}

/** Run a migration; resolves with the number of records copied. */
export async function migrate(cfg: MigrationConfig, opts: MigrateOptions = {}): Promise<number> {
  const log = opts.log ?? (() => {});
  const source = await openBackend(cfg.source, 'source');
  let destination: Backend | null = null;
  try {
    if (opts.reset) {
      await source.delete(MIGRATION_KEY);
      return 0;
    }
    const lock = await source.get(MIGRATION_KEY);
    if (lock) {
      let started = '?';
      try {
        started = String((JSON.parse(lock.toString('utf8')) as { start?: string }).start);
      } catch {
        /* unreadable lock */
      }
      throw new MigrationError(
        `storage migration in progress (started: ${started}); if no migration runs, remove the lock with -reset`,
      );
    }
    destination = await openBackend(cfg.destination, 'destination');
    if (!opts.start && (await destination.get('core/seal-config')))
      throw new MigrationError('destination: storage is already initialised; migrate into empty storage');
    await source.put(MIGRATION_KEY, Buffer.from(JSON.stringify({ start: new Date().toISOString() })));
    const keys = (await listAll(source, '')).filter((k) => !SKIP.has(k) && (!opts.start || k >= opts.start)).sort();
    const parallel = Math.max(1, opts.maxParallel ?? 10);
    let next = 0;
    let copied = 0;
    const dest = destination;
    const worker = async () => {
      for (;;) {
        const i = next++;
        if (i >= keys.length) return;
        const k = keys[i]!;
        const v = await source.get(k);
        if (v === null) continue; // deleted meanwhile (nothing should run on the source)
        await dest.put(k, v);
        copied++;
        if (copied % 1000 === 0) log(`copied ${copied} of ${keys.length} records`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, keys.length || 1) }, worker));
    await source.delete(MIGRATION_KEY);
    return copied;
  } finally {
    await destination?.close().catch(() => {});
    await source.close().catch(() => {});
  }
}
