/**
 * The storage format version (issue 26). Every store records the version of the layout it was
 * written in: the file backend in `<root>/FORMAT`, PostgreSQL in one row of `<table>_format`.
 *
 * - A store without a record was written before keyhold recorded one: format 0. Its layout is
 *   format 1's, so the upgrade 0 -> 1 only writes the record.
 * - Opening a store of an older format runs each upgrade step in order, then writes the new version.
 *   Steps are idempotent and the record is written last (atomically: a renamed file, one UPDATE), so
 *   a crash at any point leaves a store the next start upgrades again from where the record says.
 * - A store of a newer format than this build knows is refused before anything is written, with one
 *   line naming both versions.
 *
 * A format change adds a step here, bumps STORAGE_FORMAT and commits a fixture written by the last
 * build before the change (docs/development.md, "Storage format changes").
 */
import { closeSync, existsSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The format this build writes (and the newest it reads). */
export const STORAGE_FORMAT = 1;

/** File name of the file backend's format record, in the storage root. */
export const FORMAT_FILE = 'FORMAT';

/** Thrown when a store's format is newer than this build, or its record is unreadable. Nothing was changed. */
export class StorageFormatError extends Error {}

/** One upgrade step of the file backend, from format `n` to `n + 1` (idempotent). */
type FileStep = (root: string) => void;
/** Upgrade steps by the format they start from. */
const FILE_STEPS: Record<number, FileStep> = {
  // 0 -> 1: the layout is unchanged; recording the version is the whole upgrade.
  0: () => {},
};

/** One upgrade step of the PostgreSQL backend (idempotent SQL through `query`). */
type SqlStep = (query: SqlQuery) => Promise<void>;
const SQL_STEPS: Record<number, SqlStep> = {
  0: async () => {},
};

/** A query function (pg's Pool.query shape, narrowed). */
export type SqlQuery = (sql: string, values?: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

/** The refusal line for a store of format `found`. */
function tooNew(where: string, found: number): StorageFormatError {
  return new StorageFormatError(
    `${where} has storage format version ${found}, newer than the newest this keyhold reads (${STORAGE_FORMAT}): run the keyhold release that wrote it, or a newer one (nothing was changed)`,
  );
}

/** Parse a format record; throws naming the place when it is not one. */
function parseRecord(where: string, text: string): number {
  let v: unknown;
  try {
    v = (JSON.parse(text) as { format?: unknown }).format;
  } catch {
    v = undefined;
  }
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw new StorageFormatError(
      `${where}: unreadable storage format record (expected {"format": N}); nothing was changed`,
    );
  return v;
}

/**
 * The format of the file store at `root`: its record, 0 for a store written before records, or
 * null for a new (empty) store. Throws StorageFormatError for a newer format. Reads only.
 */
export function readFileFormat(root: string): number | null {
  const path = join(root, FORMAT_FILE);
  if (existsSync(path)) {
    const v = parseRecord(path, readFileSync(path, 'utf8'));
    if (v > STORAGE_FORMAT) throw tooNew(`storage at ${root}`, v);
    return v;
  }
  const hasData = ['log', 'data'].some((d) => {
    try {
      return readdirSync(join(root, d)).length > 0;
    } catch {
      return false;
    }
  });
  return hasData ? 0 : null;
}

/** Write the record atomically: a temporary file, fsync, rename, fsync of the folder. */
function writeRecord(root: string, version: number): void {
  const path = join(root, FORMAT_FILE);
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, JSON.stringify({ format: version }) + '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  const dfd = openSync(root, 'r');
  try {
    fsyncSync(dfd);
  } finally {
    closeSync(dfd);
  }
}

/**
 * Bring the file store at `root` (locked by the caller) to STORAGE_FORMAT, given what
 * readFileFormat found. Returns the format it started from (null: new store).
 */
export function upgradeFileFormat(root: string, found: number | null): number | null {
  if (found === STORAGE_FORMAT) return found;
  if (found !== null) {
    for (let v = found; v < STORAGE_FORMAT; v++) {
      FILE_STEPS[v]!(root);
      writeRecord(root, v + 1);
    }
  } else writeRecord(root, STORAGE_FORMAT);
  return found;
}

/**
 * Refuse a PostgreSQL store of a newer format (reads only). `formatTable` is the quoted name of the
 * format table, `label` its plain name. Returns the format found (0: no record, as written before
 * keyhold kept one; the format table missing counts the same).
 */
export async function readPostgresFormat(query: SqlQuery, formatTable: string, label: string): Promise<number> {
  const exists = await query(`SELECT to_regclass($1) IS NOT NULL AS present`, [formatTable]);
  if (!exists.rows[0]?.present) return 0;
  const r = await query(`SELECT version FROM ${formatTable} WHERE id = 1`);
  if (!r.rows.length) return 0;
  const v = Number(r.rows[0]!.version);
  if (!Number.isSafeInteger(v) || v < 0)
    throw new StorageFormatError(
      `table ${label}: unreadable storage format version ${String(r.rows[0]!.version)}; nothing was changed`,
    );
  if (v > STORAGE_FORMAT) throw tooNew(`PostgreSQL table ${label}`, v);
  return v;
}

/**
 * Bring a PostgreSQL store to STORAGE_FORMAT (creates the format table). Each step is idempotent and
 * the version row moves forward only (GREATEST), so daemons starting together agree.
 */
export async function upgradePostgresFormat(query: SqlQuery, formatTable: string, found: number): Promise<void> {
  await query(
    `CREATE TABLE IF NOT EXISTS ${formatTable} (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL, updated_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
  );
  for (let v = found; v < STORAGE_FORMAT; v++) {
    await SQL_STEPS[v]!(query);
    await query(
      `INSERT INTO ${formatTable} (id, version) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET version = GREATEST(${formatTable}.version, EXCLUDED.version), updated_at = now()`,
      [v + 1],
    );
  }
  if (found === STORAGE_FORMAT)
    await query(`INSERT INTO ${formatTable} (id, version) VALUES (1, $1) ON CONFLICT (id) DO NOTHING`, [
      STORAGE_FORMAT,
    ]);
}
