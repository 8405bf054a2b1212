/**
 * The storage format version (src/storage/format-version.ts) on the real file backend and, where
 * PostgreSQL is installed, on a throwaway PostgreSQL (test/support/postgres.ts).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FileBackend } from '../../../src/storage/file.js';
import {
  FORMAT_FILE,
  STORAGE_FORMAT,
  StorageFormatError,
  readFileFormat,
} from '../../../src/storage/format-version.js';
import { PostgresBackend } from '../../../src/storage/postgres.js';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../../support/postgres.js';

const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'keyhold-format-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const record = (root: string) => JSON.parse(readFileSync(join(root, FORMAT_FILE), 'utf8'));

describe('file backend format version', () => {
  it('a new store records the current format', async () => {
    const root = join(temp(), 'data');
    expect(readFileFormat(root)).toBeNull();
    const b = new FileBackend(root);
    b.openSync();
    await b.close();
    expect(record(root)).toEqual({ format: STORAGE_FORMAT });
  });

  it('a store without a record (format 0) is upgraded and keeps its records', async () => {
    const root = join(temp(), 'data');
    const b = new FileBackend(root);
    b.openSync();
    await b.put('a/b', Buffer.from('value'));
    await b.close();
    rmSync(join(root, FORMAT_FILE)); // as written before keyhold kept a record
    expect(readFileFormat(root)).toBe(0);
    const again = new FileBackend(root);
    again.openSync();
    expect((await again.get('a/b'))?.toString()).toBe('value');
    await again.close();
    expect(record(root)).toEqual({ format: STORAGE_FORMAT });
  });

  it('a crash while writing the record (a leftover FORMAT.tmp) leaves a store the next open upgrades', async () => {
    const root = join(temp(), 'data');
    const b = new FileBackend(root);
    b.openSync();
    await b.put('k', Buffer.from('v'));
    await b.close();
    rmSync(join(root, FORMAT_FILE));
    writeFileSync(join(root, `${FORMAT_FILE}.tmp`), '{"form');
    const again = new FileBackend(root);
    again.openSync();
    expect((await again.get('k'))?.toString()).toBe('v');
    await again.close();
    expect(record(root)).toEqual({ format: STORAGE_FORMAT });
    expect(existsSync(join(root, `${FORMAT_FILE}.tmp`))).toBe(false);
  });

  it('a newer format is refused with one line naming both versions; no lock or file is left', () => {
    const root = join(temp(), 'data');
    mkdirSync(join(root, 'log'), { recursive: true });
    writeFileSync(join(root, FORMAT_FILE), JSON.stringify({ format: STORAGE_FORMAT + 4 }));
    const before = readdirSync(root).sort();
    const b = new FileBackend(root);
    expect(() => b.openSync()).toThrow(StorageFormatError);
    expect(() => b.openSync()).toThrow(
      new RegExp(
        `format version ${STORAGE_FORMAT + 4}, newer than the newest this keyhold reads \\(${STORAGE_FORMAT}\\)`,
      ),
    );
    expect(readdirSync(root).sort()).toEqual(before);
    expect(readdirSync(join(root, 'log'))).toEqual([]);
  });

  it('refuses a record that is not {"format": N}', () => {
    const root = temp();
    for (const bad of ['', 'x', '{"format": -1}', '{"format": 1.5}', '{"version": 1}']) {
      writeFileSync(join(root, FORMAT_FILE), bad);
      expect(() => readFileFormat(root), bad).toThrow(/unreadable storage format record/);
    }
  });
});

const skip = postgresUnavailable();
describe.skipIf(!!skip)('PostgreSQL format version', () => {
  let pg: TestPostgres;
  const open: PostgresBackend[] = [];
  const backend = async (db: string, params: Record<string, string> = {}) => {
    const b = new PostgresBackend({ connection_url: pg.urlFor(db), ...params }, { env: {} });
    await b.open();
    open.push(b);
    return b;
  };
  afterAll(async () => {
    for (const b of open) await b.close().catch(() => {});
    pg?.stop();
  });

  it('records the format in <table>_format, upgrades a store without it, and refuses a newer one untouched', async () => {
    pg = startPostgres({ fsync: false });
    pg.createDb('fmt');
    const b = await backend('fmt');
    expect(pg.psql('SELECT version FROM vault_kv_store_format WHERE id = 1', 'fmt').trim()).toBe(
      String(STORAGE_FORMAT),
    );
    await b.put('core/x', Buffer.from('v'));
    // A store written before the record: the table is gone, the data stays.
    pg.psql('DROP TABLE vault_kv_store_format', 'fmt');
    const again = await backend('fmt');
    expect((await again.get('core/x'))?.toString()).toBe('v');
    expect(pg.psql('SELECT version FROM vault_kv_store_format WHERE id = 1', 'fmt').trim()).toBe(
      String(STORAGE_FORMAT),
    );
    // Newer: refused before anything is created or written.
    pg.psql(`UPDATE vault_kv_store_format SET version = ${STORAGE_FORMAT + 1}`, 'fmt');
    const rows = pg.psql('SELECT count(*) FROM vault_kv_store', 'fmt').trim();
    const newer = new PostgresBackend({ connection_url: pg.urlFor('fmt') }, { env: {} });
    await expect(newer.open()).rejects.toThrow(
      new RegExp(
        `vault_kv_store_format has storage format version ${STORAGE_FORMAT + 1}, newer than the newest this keyhold reads \\(${STORAGE_FORMAT}\\)`,
      ),
    );
    await newer.close().catch(() => {});
    expect(pg.psql('SELECT version FROM vault_kv_store_format', 'fmt').trim()).toBe(String(STORAGE_FORMAT + 1));
    expect(pg.psql('SELECT count(*) FROM vault_kv_store', 'fmt').trim()).toBe(rows);
  });
});
