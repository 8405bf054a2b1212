/**
 * Issue 26, part 3: upgrades lose nothing. A file store written by keyhold before the storage format
 * carried a version (test/fixtures/store-v0, see its README) opens with this build, is upgraded in
 * place (the format record is written), and every item reads back as the old build answered:
 * ciphertexts decrypt, signatures verify, HMACs, exports and backups match byte for byte. A store of
 * a newer format is refused with one line naming both versions, and nothing in it changes.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash, createPrivateKey } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { execa } from 'execa';
import { BIN, startDaemon, type Daemon } from '../support/daemon.js';
import { STORAGE_FORMAT } from '../../src/storage/format-version.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'store-v0');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const expected = JSON.parse(readFileSync(join(FIXTURE, 'expected.json'), 'utf8')) as any;
const unsealKey = readFileSync(join(FIXTURE, 'unseal-key.txt'), 'utf8').trim();

const dirs: string[] = [];
function copyFixture(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keyhold-upgrade-'));
  dirs.push(dir);
  cpSync(join(FIXTURE, 'data'), join(dir, 'data'), { recursive: true });
  return dir;
}

/** sha256 of every file under `dir`, by relative path. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[relative(dir, p)] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

/** A transit backup's JSON with policy.backup_info.time (when the backup was taken) left out. */
function withoutBackupTime(b64: string): unknown {
  const j = JSON.parse(Buffer.from(b64, 'base64').toString('utf8'));
  expect(typeof j.policy.backup_info.time).toBe('string');
  delete j.policy.backup_info.time;
  return j;
}

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('a store written before format versions (fixture store-v0)', () => {
  let d: Daemon;
  let dir: string;
  const root = expected.root_token as string;

  beforeAll(async () => {
    dir = copyFixture();
    expect(existsSync(join(dir, 'data', 'FORMAT'))).toBe(false);
    d = await startDaemon({ dev: false, dir, args: ['--keychain', 'none'], rootToken: root });
    const un = await d.req('POST', 'sys/unseal', { key: unsealKey }, { token: null });
    expect(un.status, JSON.stringify(un.body)).toBe(200);
    expect(un.body.sealed).toBe(false);
  }, 120_000);

  afterAll(async () => {
    await d?.stop();
  });

  it('is upgraded in place: the format record now says the current version', () => {
    expect(JSON.parse(readFileSync(join(dir, 'data', 'FORMAT'), 'utf8'))).toEqual({ format: STORAGE_FORMAT });
    expect(statSync(join(dir, 'data', 'FORMAT')).mode & 0o077).toBe(0);
  });

  it('transit: every key type keeps its versions; ciphertexts decrypt, signatures verify, HMACs, exports and backups match', async () => {
    const names = Object.keys(expected.transit);
    expect(names.length).toBeGreaterThanOrEqual(12);
    const listed = await d.req('LIST', 'transit/keys');
    expect(listed.body.data.keys.sort()).toEqual([...names].sort());
    for (const name of names) {
      const k = expected.transit[name];
      const read = await d.req('GET', `transit/keys/${name}`);
      expect(read.status, name).toBe(200);
      expect(
        {
          type: read.body.data.type,
          latest_version: read.body.data.latest_version,
          min_decryption_version: read.body.data.min_decryption_version,
          exportable: read.body.data.exportable,
          keys: read.body.data.keys,
        },
        name,
      ).toEqual({ type: k.type, ...k.read });
      for (const [version, v] of Object.entries<Record<string, string>>(k.versions)) {
        if (v.ciphertext) {
          const dec = await d.req('POST', `transit/decrypt/${name}`, { ciphertext: v.ciphertext });
          expect(dec.status, `${name} v${version} decrypt`).toBe(200);
          expect(dec.body.data.plaintext, `${name} v${version}`).toBe(v.plaintext);
        }
        if (v.signature) {
          const ver = await d.req('POST', `transit/verify/${name}`, { input: v.input, signature: v.signature });
          expect(ver.body.data?.valid, `${name} v${version} verify`).toBe(true);
          const forged = await d.req('POST', `transit/verify/${name}`, {
            input: Buffer.from('other').toString('base64'),
            signature: v.signature,
          });
          expect(forged.body.data?.valid, `${name} v${version} verify of other input`).toBe(false);
        }
        const h = await d.req('POST', `transit/hmac/${name}`, { input: v.hmac_input, key_version: Number(version) });
        expect(h.body.data?.hmac, `${name} v${version} hmac`).toBe(v.hmac);
      }
      const exp = await d.req('GET', `transit/export/${k.export_kind}/${name}`);
      expect(exp.body.data.keys, `${name} export`).toEqual(k.export);
      const backup = await d.req('GET', `transit/backup/${name}`);
      // Byte for byte except backup_info.time, which is the time of the backup call.
      expect(withoutBackupTime(backup.body.data.backup), `${name} backup`).toEqual(withoutBackupTime(k.backup));
    }
  });

  it('KV v2: every version, the deleted one, and the metadata; KV v1: every secret', async () => {
    for (const [path, m] of Object.entries<any>(expected.kv2)) {
      const meta = await d.req('GET', `secret/metadata/${path}`);
      expect(meta.body.data.current_version, path).toBe(m.current_version);
      expect(meta.body.data.max_versions, path).toBe(m.max_versions);
      expect(meta.body.data.custom_metadata, path).toEqual(m.custom_metadata);
      for (const [v, e] of Object.entries<any>(m.versions)) {
        const r = await d.req('GET', `secret/data/${path}?version=${v}`);
        expect(r.status, `${path} v${v}`).toBe(e.status);
        expect(r.body?.data?.data ?? null, `${path} v${v}`).toEqual(e.data);
        expect(meta.body.data.versions[v].deletion_time, `${path} v${v}`).toBe(e.deletion_time);
        expect(meta.body.data.versions[v].destroyed).toBe(e.destroyed);
      }
    }
    for (const [path, data] of Object.entries(expected.kv1))
      expect((await d.req('GET', `kv1/${path}`)).body.data, path).toEqual(data);
  });

  it('policies and tokens: the same text, the same policies, and the tokens still work', async () => {
    for (const [name, policy] of Object.entries(expected.policies))
      expect((await d.req('GET', `sys/policies/acl/${name}`)).body.data.policy, name).toBe(policy);
    for (const [label, t] of Object.entries<any>(expected.tokens)) {
      const look = await d.req('GET', 'auth/token/lookup-self', undefined, { token: t.token });
      expect(look.status, label).toBe(200);
      expect(
        {
          policies: look.body.data.policies,
          accessor: look.body.data.accessor,
          meta: look.body.data.meta ?? null,
          orphan: look.body.data.orphan,
        },
        label,
      ).toEqual({ policies: t.policies, accessor: t.accessor, meta: t.meta, orphan: t.orphan });
    }
    const reader = expected.tokens.reader.token;
    expect((await d.req('GET', 'secret/data/app/db', undefined, { token: reader })).body.data.data).toEqual(
      expected.kv2['app/db'].versions['3'].data,
    );
    expect((await d.req('GET', 'kv1/team/db', undefined, { token: reader })).status).toBe(403);
    const enc = await d.req(
      'POST',
      'transit/encrypt/k-aes256-gcm96',
      { plaintext: 'aGk=' },
      { token: expected.tokens.transit.token },
    );
    expect(enc.body.data.ciphertext).toMatch(/^vault:v2:/);
  });

  it('AppRole and JWT roles: the same settings, and logins still issue tokens with their policies', async () => {
    const a = expected.approle;
    expect((await d.req('GET', `auth/approle/role/${a.role}`)).body.data).toEqual(a.read);
    const login = await d.req(
      'POST',
      'auth/approle/login',
      { role_id: a.role_id, secret_id: a.secret_id },
      { token: null },
    );
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    expect([...login.body.auth.token_policies].sort()).toEqual(a.policies);

    const j = expected.jwt;
    expect((await d.req('GET', `auth/jwt/role/${j.role}`)).body.data).toEqual(j.read);
    const jwt = await new SignJWT({ ...j.claims })
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(j.issuer)
      .setAudience(j.audience)
      .setSubject('upgrade-test')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(createPrivateKey(j.private_key_pem));
    const jl = await d.req('POST', 'auth/jwt/login', { role: j.role, jwt }, { token: null });
    expect(jl.status, JSON.stringify(jl.body)).toBe(200);
    expect(jl.body.auth.token_policies).toContain('fixture-transit');
  });

  it('sync: the destination and its associations', async () => {
    const s = expected.sync;
    const dest = await d.req('GET', `sys/sync/destinations/${s.type}/${s.name}`);
    expect(dest.status).toBe(200);
    expect(dest.body.data.connection_details).toEqual(s.connection_details);
    expect(dest.body.data.options).toEqual(s.options);
    const assoc = await d.req('GET', `sys/sync/destinations/${s.type}/${s.name}/associations`);
    const got = Object.values<any>(assoc.body.data.associated_secrets)
      .map((x) => ({ mount: x.mount, secret_name: x.secret_name }))
      .sort((x, y) => x.secret_name.localeCompare(y.secret_name));
    expect(got).toEqual(s.associations);
  });

  it('opens again after the upgrade (the record is not rewritten) and the root token still works', async () => {
    await d.stop();
    const before = readFileSync(join(dir, 'data', 'FORMAT'));
    const mtime = statSync(join(dir, 'data', 'FORMAT')).mtimeMs;
    d = await startDaemon({ dev: false, dir, args: ['--keychain', 'none'], rootToken: root });
    expect((await d.req('POST', 'sys/unseal', { key: unsealKey }, { token: null })).body.sealed).toBe(false);
    expect(readFileSync(join(dir, 'data', 'FORMAT'))).toEqual(before);
    expect(statSync(join(dir, 'data', 'FORMAT')).mtimeMs).toBe(mtime);
    expect((await d.req('GET', 'sys/mounts')).status).toBe(200);
  });
});

describe('a store of a newer format', () => {
  it('is refused with one line naming both versions, and nothing in it changes', async () => {
    const dir = copyFixture();
    writeFileSync(join(dir, 'data', 'FORMAT'), JSON.stringify({ format: STORAGE_FORMAT + 1 }) + '\n');
    const before = snapshot(dir);
    const r = await execa(
      process.execPath,
      [BIN, 'server', '--storage-path', join(dir, 'data'), '--socket', join(dir, 'k.sock'), '--keychain', 'none'],
      { reject: false, timeout: 30_000, env: { KEYHOLD_HOME: dir } },
    );
    expect(r.exitCode).not.toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`storage format version ${STORAGE_FORMAT + 1}`);
    expect(lines[0]).toContain(`(${STORAGE_FORMAT})`);
    expect(snapshot(dir)).toEqual(before);
  });

  it('an unreadable format record is refused the same way', async () => {
    const dir = copyFixture();
    writeFileSync(join(dir, 'data', 'FORMAT'), 'garbage');
    const before = snapshot(dir);
    const r = await execa(
      process.execPath,
      [BIN, 'server', '--storage-path', join(dir, 'data'), '--socket', join(dir, 'k.sock'), '--keychain', 'none'],
      { reject: false, timeout: 30_000, env: { KEYHOLD_HOME: dir } },
    );
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr.trim()).toMatch(/unreadable storage format record/);
    expect(snapshot(dir)).toEqual(before);
  });
});
