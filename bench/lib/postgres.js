/**
 * A throwaway PostgreSQL for the cluster cases (as test/support/postgres.ts does for the tests):
 * initdb in a temp dir (as the `postgres` system user under root), pg_ctl start on a Unix socket
 * in that dir, fsync on (the kv-put case compares durable writes with the file backend's fsync).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MissingFeature } from './setup.js';

function binDir() {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const v = readdirSync(base)
    .filter((x) => existsSync(join(base, x, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return v.length ? join(base, v[0], 'bin') : null;
}

/** Start a cluster; `{url, psql(sql), stop()}`. Throws MissingFeature without PostgreSQL. */
export function startPostgres() {
  const bin = binDir();
  if (!bin) throw new MissingFeature('PostgreSQL server not installed (scripts/setup-postgres.sh installs it as root)');
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'keyhold-bench-pg-'));
  const data = join(dir, 'data');
  const password = 'bench-' + Math.random().toString(36).slice(2);
  const pw = join(dir, 'pw');
  writeFileSync(pw, password + '\n', { mode: 0o600 });
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
    chownSync(pw, uid, gid);
  }
  chmodSync(dir, 0o755);
  const run = (prog, args) => {
    const full = join(bin, prog);
    const r = root
      ? spawnSync('runuser', ['-u', 'postgres', '--', full, ...args], { encoding: 'utf8', cwd: dir })
      : spawnSync(full, args, { encoding: 'utf8', cwd: dir });
    if (r.status !== 0) throw new Error(`${prog} failed: ${r.stderr || r.stdout}`);
  };
  run('initdb', [
    '-D',
    data,
    '-U',
    'keyhold',
    '--pwfile',
    pw,
    '-A',
    'scram-sha-256',
    '--no-sync',
    '-E',
    'UTF8',
    '--locale',
    'C',
  ]);
  appendFileSync(
    join(data, 'postgresql.conf'),
    `listen_addresses = ''\nunix_socket_directories = '${dir}'\nmax_connections = 200\n`,
  );
  run('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
  const env = { ...process.env, PGPASSWORD: password };
  const psql = (sql, db = 'postgres') => {
    const r = spawnSync(
      'psql',
      ['-h', dir, '-U', 'keyhold', '-d', db, '-X', '-q', '-t', '-A', '-v', 'ON_ERROR_STOP=1', '-c', sql],
      { encoding: 'utf8', env },
    );
    if (r.status !== 0) throw new Error(`psql: ${r.stderr}`);
    return r.stdout;
  };
  let dbs = 0;
  return {
    dir,
    psql,
    /** A fresh database; its connection URL. */
    newDb() {
      const name = `b${dbs++}`;
      psql(`CREATE DATABASE ${name}`);
      return { name, url: `postgres://keyhold:${password}@localhost/${name}?host=${encodeURIComponent(dir)}` };
    },
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        /* already stopped */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
