/**
 * Test support: a throwaway PostgreSQL cluster, made with initdb in a temp directory and started
 * with pg_ctl on a Unix socket inside that directory (no TCP port). PostgreSQL refuses to run as
 * root, so under root the cluster belongs to the `postgres` system user (from Debian's package,
 * installed by scripts/setup-postgres.sh) and its programs run through runuser.
 * One cluster per test file; `stop()` removes it.
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

/** A running throwaway PostgreSQL. */
export interface TestPostgres {
  dir: string;
  /** Directory of the Unix socket (`host=` in libpq terms). */
  socketDir: string;
  /** `postgres://keyhold:<pw>@/keyhold?host=<socketDir>` for the superuser-less test role. */
  url: string;
  user: string;
  password: string;
  /** Connection URL for another database of this cluster (created on demand by `createDb`). */
  urlFor(db: string): string;
  /** `CREATE DATABASE name` (owned by the test role). */
  createDb(name: string): void;
  /** Run SQL with psql and return stdout (tuples only, unaligned). */
  psql(sql: string, db?: string): string;
  /** pg_ctl stop -m fast (connections are cut). */
  pause(): void;
  /** pg_ctl start again after pause(). */
  resume(): void;
  /** Stop the server and remove the directory. */
  stop(): void;
}

function binDir(): string | null {
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions.length) return join(base, versions[0]!, 'bin');
  }
  const w = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  return w.status === 0 ? join(w.stdout.trim(), '..') : null;
}

/** Why PostgreSQL tests cannot run here, or null when they can. */
export function postgresUnavailable(): string | null {
  if (!binDir()) return 'PostgreSQL server binaries (initdb, pg_ctl) not found; run scripts/setup-postgres.sh as root';
  if (process.getuid?.() === 0 && spawnSync('id', ['postgres']).status !== 0)
    return 'running as root but there is no "postgres" system user to own the test cluster';
  return null;
}

/** Create and start a throwaway cluster (synchronously; ~1-2 s). */
export function startPostgres(opts: { fsync?: boolean } = {}): TestPostgres {
  const bin = binDir();
  if (!bin) throw new Error(postgresUnavailable() ?? 'no PostgreSQL');
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'keyhold-pg-'));
  const data = join(dir, 'data');
  const password = 'pw-' + Math.random().toString(36).slice(2);
  const user = 'keyhold';
  const pwfile = join(dir, 'pw');
  writeFileSync(pwfile, password + '\n', { mode: 0o600 });
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
    chownSync(pwfile, uid, gid);
  }
  chmodSync(dir, 0o755); // the test process (root or the owner) connects to the socket inside
  const run = (prog: string, args: string[], input?: string): string => {
    const full = join(bin, prog);
    const r = asRoot
      ? spawnSync('runuser', ['-u', 'postgres', '--', full, ...args], { encoding: 'utf8', input, cwd: dir })
      : spawnSync(full, args, { encoding: 'utf8', input, cwd: dir });
    if (r.status !== 0) throw new Error(`${prog} ${args.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
    return r.stdout;
  };
  // Password authentication on the socket, so tests can check a wrong password; the superuser is
  // the test role itself (it creates databases and tables).
  run('initdb', [
    '-D',
    data,
    '-U',
    user,
    '--pwfile',
    pwfile,
    '-A',
    'scram-sha-256',
    '--no-sync',
    '-E',
    'UTF8',
    '--locale',
    'C',
  ]);
  const conf = [
    `listen_addresses = ''`,
    `unix_socket_directories = '${dir}'`,
    `fsync = ${opts.fsync ? 'on' : 'off'}`,
    `synchronous_commit = ${opts.fsync ? 'on' : 'off'}`,
    `full_page_writes = off`,
    `max_connections = 200`,
    `shared_buffers = 32MB`,
  ].join('\n');
  appendFileSync(join(data, 'postgresql.conf'), conf + '\n');
  const start = () => run('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '30', 'start']);
  start();
  const env = { ...process.env, PGPASSWORD: password };
  const psql = (sql: string, db = user): string => {
    const r = spawnSync(
      'psql',
      ['-h', dir, '-U', user, '-d', db, '-X', '-q', '-t', '-A', '-v', 'ON_ERROR_STOP=1', '-c', sql],
      { encoding: 'utf8', env },
    );
    if (r.status !== 0) throw new Error(`psql failed: ${r.stderr}`);
    return r.stdout;
  };
  psql(`SELECT 1`, 'postgres');
  spawnSync('psql', ['-h', dir, '-U', user, '-d', 'postgres', '-X', '-q', '-c', `CREATE DATABASE ${user}`], { env });
  const urlFor = (db: string) => `postgres://${user}:${password}@localhost/${db}?host=${encodeURIComponent(dir)}`;
  let stopped = false;
  return {
    dir,
    socketDir: dir,
    url: urlFor(user),
    user,
    password,
    urlFor,
    createDb: (name) => void psql(`CREATE DATABASE "${name}"`, 'postgres'),
    psql,
    pause: () => void run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    resume: () => void start(),
    stop: () => {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        /* already stopped */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
