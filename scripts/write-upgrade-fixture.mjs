#!/usr/bin/env node
/**
 * Write an upgrade fixture: a file store holding one of everything keyhold keeps (transit keys of
 * every local type with several versions, KV v1 and v2 secrets with versions, tokens, policies,
 * AppRole and JWT roles, a sync destination with associations), its unseal key, and
 * `expected.json`: what the API answered when the store was written (ciphertexts, signatures,
 * HMACs, public keys, exports, secrets). test/integration/package-upgrade.test.ts opens the copy
 * with the current build and checks every item against expected.json.
 *
 *   node scripts/write-upgrade-fixture.mjs --keyhold <checkout with bin/ and dist/ built> --out test/fixtures/<name>
 *
 * Run it with the build whose format the fixture records (the release before a format change), never
 * with the build that changes the format (docs/development.md, "Storage format changes").
 */
import { spawn, execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const keyhold = resolve(opt('--keyhold') ?? '.');
const out = opt('--out') && resolve(opt('--out'));
if (!out) {
  process.stderr.write('usage: write-upgrade-fixture.mjs --keyhold <checkout> --out <fixture dir>\n');
  process.exit(1);
}
const bin = join(keyhold, 'bin', 'keyhold.js');
if (!existsSync(join(keyhold, 'dist', 'main.js'))) throw new Error(`${keyhold}: not built (dist/main.js missing)`);

const dir = mkdtempSync(join(tmpdir(), 'keyhold-fixture-'));
const socket = join(dir, 'keyhold.sock');
const data = join(dir, 'data');
const env = { ...process.env, KEYHOLD_HOME: dir, NO_COLOR: '1' };

function call(method, path, body, token) {
  return new Promise((res, rej) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers = {
      ...(token ? { 'X-Vault-Token': token } : {}),
      ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) } : {}),
    };
    const r = request({ socketPath: socket, path: '/v1/' + path, method, headers }, (resp) => {
      const chunks = [];
      resp.on('data', (c) => chunks.push(c));
      resp.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        res({ status: resp.statusCode, body: text ? JSON.parse(text) : null });
      });
    });
    r.on('error', rej);
    r.end(payload);
  });
}

let root;
async function must(method, path, body) {
  const r = await call(method, path, body, root);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

function start() {
  const p = spawn(
    process.execPath,
    [bin, 'server', '--socket', socket, '--storage-path', data, '--keychain', 'none', '--log-level', 'warn'],
    { env, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  return p;
}

async function waitUp(p) {
  for (let i = 0; i < 400; i++) {
    if (p.exitCode !== null) throw new Error(`daemon exited ${p.exitCode}`);
    try {
      await call('GET', 'sys/health');
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error('daemon did not start');
}

const b64 = (s) => Buffer.from(s).toString('base64');
const daemon = start();
try {
  await waitUp(daemon);
  const init = execFileSync(process.execPath, [bin, 'operator', 'init', '--no-keychain'], {
    env: { ...env, KEYHOLD_ADDR: `unix://${socket}` },
    encoding: 'utf8',
  });
  const unsealKey = /Unseal Key 1: (\S+)/.exec(init)[1];
  root = /Initial Root Token: (\S+)/.exec(init)[1];
  const expected = {
    written_by: { version: (await call('GET', 'sys/seal-status')).body.version, commit: gitHead(keyhold) },
    root_token: root,
    transit: {},
    kv2: {},
    kv1: {},
    policies: {},
    tokens: {},
    approle: {},
    jwt: {},
    sync: {},
  };

  // Transit: every local key type, each rotated once (two versions), with what each can do.
  await must('POST', 'sys/mounts/transit', { type: 'transit' });
  const types = [
    'aes128-gcm96',
    'aes256-gcm96',
    'chacha20-poly1305',
    'xchacha20-poly1305',
    'ed25519',
    'ecdsa-p256',
    'ecdsa-p384',
    'ecdsa-p521',
    'rsa-2048',
    'rsa-3072',
    'rsa-4096',
    'hmac',
  ];
  for (const type of types) {
    const name = `k-${type}`;
    await must('POST', `transit/keys/${name}`, { type, exportable: true, allow_plaintext_backup: true });
    const v1 = {};
    const item = { type, versions: {} };
    for (const version of [1, 2]) {
      if (version === 2) await must('POST', `transit/keys/${name}/rotate`);
      const v = {};
      const plaintext = b64(`fixture plaintext ${type} v${version}`);
      if (!['ed25519', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'hmac'].includes(type)) {
        v.plaintext = plaintext;
        v.ciphertext = (await must('POST', `transit/encrypt/${name}`, { plaintext })).data.ciphertext;
      }
      if (type.startsWith('ecdsa') || type.startsWith('rsa') || type === 'ed25519') {
        v.input = plaintext;
        v.signature = (await must('POST', `transit/sign/${name}`, { input: plaintext })).data.signature;
      }
      v.hmac_input = plaintext;
      v.hmac = (await must('POST', `transit/hmac/${name}`, { input: plaintext })).data.hmac;
      item.versions[version] = v;
      Object.assign(v1, v);
    }
    const read = (await must('GET', `transit/keys/${name}`)).data;
    item.read = {
      latest_version: read.latest_version,
      min_decryption_version: read.min_decryption_version,
      exportable: read.exportable,
      keys: read.keys,
    };
    const kind =
      type === 'hmac'
        ? 'hmac-key'
        : ['ed25519', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521'].includes(type)
          ? 'signing-key'
          : 'encryption-key';
    item.export = (await must('GET', `transit/export/${kind}/${name}`)).data.keys;
    item.export_kind = kind;
    item.backup = (await must('GET', `transit/backup/${name}`)).data.backup;
    expected.transit[name] = item;
  }

  // KV v2 (mount "secret") with three versions, one deleted, and custom metadata; KV v1 (mount "kv1").
  await must('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } });
  for (const [i, pw] of ['one', 'two', 'three'].entries())
    await must('POST', 'secret/data/app/db', { data: { user: 'app', password: pw, n: i + 1 } });
  await must('POST', 'secret/delete/app/db', { versions: [2] });
  await must('POST', 'secret/metadata/app/db', { custom_metadata: { owner: 'fixtures' }, max_versions: 5 });
  await must('POST', 'secret/data/app/web', { data: { API_KEY: 'k-web', binary: b64('\u0000\u0001\u00ff') } });
  for (const path of ['app/db', 'app/web']) {
    const meta = (await must('GET', `secret/metadata/${path}`)).data;
    const versions = {};
    for (const v of Object.keys(meta.versions)) {
      const r = await call('GET', `secret/data/${path}?version=${v}`, undefined, root);
      versions[v] = {
        status: r.status,
        data: r.body?.data?.data ?? null,
        deletion_time: meta.versions[v].deletion_time,
        destroyed: meta.versions[v].destroyed,
      };
    }
    expected.kv2[path] = {
      current_version: meta.current_version,
      max_versions: meta.max_versions,
      custom_metadata: meta.custom_metadata,
      versions,
    };
  }
  await must('POST', 'sys/mounts/kv1', { type: 'kv', options: { version: '1' } });
  await must('POST', 'kv1/team/db', { user: 'admin', password: 's3cr3t' });
  await must('POST', 'kv1/team/api', { token: 'abc', nested: { a: [1, 2, 3] } });
  for (const p of ['team/db', 'team/api']) expected.kv1[p] = (await must('GET', `kv1/${p}`)).data;

  // Policies and tokens (one with a chosen id, one periodic, one orphan with metadata).
  const policies = {
    'fixture-reader': 'path "secret/data/app/*" {\n  capabilities = ["read", "list"]\n}\n',
    'fixture-transit':
      'path "transit/encrypt/k-aes256-gcm96" {\n  capabilities = ["update"]\n}\npath "transit/decrypt/k-aes256-gcm96" {\n  capabilities = ["update"]\n}\n',
  };
  for (const [name, policy] of Object.entries(policies)) {
    await must('PUT', `sys/policies/acl/${name}`, { policy });
    expected.policies[name] = (await must('GET', `sys/policies/acl/${name}`)).data.policy;
  }
  const tokens = {
    reader: {
      id: 'fixture-reader-token-0001',
      policies: ['fixture-reader'],
      ttl: '87600h',
      meta: { team: 'fixtures' },
    },
    transit: { policies: ['fixture-transit'], ttl: '87600h' },
    periodic: { policies: ['fixture-reader'], period: '87600h', no_parent: true },
  };
  for (const [label, body] of Object.entries(tokens)) {
    const auth = (await must('POST', body.no_parent ? 'auth/token/create-orphan' : 'auth/token/create', body)).auth;
    const look = (await must('POST', 'auth/token/lookup', { token: auth.client_token })).data;
    expected.tokens[label] = {
      token: auth.client_token,
      accessor: auth.accessor,
      policies: look.policies,
      meta: look.meta ?? null,
      period: look.period ?? 0,
      orphan: look.orphan,
    };
  }

  // AppRole with a fixed role id and a custom secret id; JWT with a static validation key.
  await must('POST', 'sys/auth/approle', { type: 'approle' });
  await must('POST', 'auth/approle/role/ci', {
    token_policies: ['fixture-reader'],
    token_ttl: '1h',
    secret_id_ttl: '0',
  });
  await must('POST', 'auth/approle/role/ci/role-id', { role_id: 'fixture-role-id-ci' });
  await must('POST', 'auth/approle/role/ci/custom-secret-id', { secret_id: 'fixture-secret-id-ci' });
  expected.approle = {
    role: 'ci',
    role_id: 'fixture-role-id-ci',
    secret_id: 'fixture-secret-id-ci',
    policies: ['default', 'fixture-reader'].sort(),
    read: (await must('GET', 'auth/approle/role/ci')).data,
  };
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  await must('POST', 'sys/auth/jwt', { type: 'jwt' });
  await must('POST', 'auth/jwt/config', {
    jwt_validation_pubkeys: [publicKey.export({ type: 'spki', format: 'pem' })],
    bound_issuer: 'https://issuer.fixture.test',
  });
  await must('POST', 'auth/jwt/role/deploy', {
    role_type: 'jwt',
    user_claim: 'sub',
    bound_audiences: ['keyhold-fixture'],
    bound_claims: { repo: 'octo/app' },
    token_policies: ['fixture-transit'],
    token_ttl: '10m',
  });
  expected.jwt = {
    role: 'deploy',
    issuer: 'https://issuer.fixture.test',
    audience: 'keyhold-fixture',
    claims: { repo: 'octo/app' },
    private_key_pem: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    read: (await must('GET', 'auth/jwt/role/deploy')).data,
  };

  // Sync: a destination (unreachable endpoint: nothing leaves the machine) with two associations.
  const dest = {
    access_token: 'fixture-access-token',
    project_id: 'prj_fixture',
    team_id: 'team_fixture',
    deployment_environments: 'production',
    endpoint_url: 'http://127.0.0.1:9',
    allowed_ipv4_addresses: ['127.0.0.1/32'],
    allowed_ports: [9],
  };
  await must('POST', 'sys/sync/destinations/hosting-project/web', dest);
  await must('POST', 'sys/sync/destinations/hosting-project/web/associations/set', {
    mount: 'secret',
    secret_name: 'app/web',
  });
  await must('POST', 'sys/sync/destinations/hosting-project/web/associations/set', {
    mount: 'secret',
    secret_name: 'app/db',
  });
  const d = (await must('GET', 'sys/sync/destinations/hosting-project/web')).data;
  const assoc = (await must('GET', 'sys/sync/destinations/hosting-project/web/associations')).data.associated_secrets;
  expected.sync = {
    type: 'hosting-project',
    name: 'web',
    connection_details: d.connection_details,
    options: d.options,
    associations: Object.values(assoc)
      .map((a) => ({ mount: a.mount, secret_name: a.secret_name }))
      .sort((x, y) => x.secret_name.localeCompare(y.secret_name)),
  };

  // Stop cleanly (the file store flushes on SIGTERM), then copy the store beside its unseal key.
  await new Promise((r) => {
    daemon.once('exit', r);
    daemon.kill('SIGTERM');
  });
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  cpSync(data, join(out, 'data'), { recursive: true, filter: (src) => !/\.lock$|[\\/]lock$/.test(src) });
  writeFileSync(join(out, 'unseal-key.txt'), unsealKey + '\n');
  writeFileSync(join(out, 'expected.json'), JSON.stringify(expected, null, 2) + '\n');
  process.stderr.write(`fixture written to ${out}\n`);
} finally {
  if (daemon.exitCode === null) daemon.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}

function gitHead(root) {
  try {
    return execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}
