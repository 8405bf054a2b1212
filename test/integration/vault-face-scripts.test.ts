/**
 * Issue 34: scripts written for HashiCorp's `vault` CLI, run unchanged through a `vault` symlink to
 * keyhold against a real daemon (TCP, VAULT_ADDR/VAULT_TOKEN only), with `set -euo pipefail` and jq.
 * The expected shapes are the vault CLI's documented ones (command/format.go: the JSON envelope
 * request_id, lease_id, lease_duration, renewable, data, warnings, auth, wrap_info; command/util.go
 * RawField: -field reads auth fields; exit 0 ok, 1 usage/local, 2 server error).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';
import { haveJq, runScript, vaultBinDir } from './vault-face-support.js';

let d: Daemon;
let bin: string;
let jq = false;
let env: Record<string, string>;

beforeAll(async () => {
  jq = await haveJq();
  d = await startDaemon({ tcp: true });
  bin = vaultBinDir();
  // Only the vault CLI's variables; a KEYHOLD_ADDR pointing nowhere shows that VAULT_ADDR wins.
  env = {
    VAULT_ADDR: d.tcp!,
    VAULT_TOKEN: d.token,
    KEYHOLD_HOME: d.dir,
    KEYHOLD_ADDR: 'unix:///nonexistent/keyhold.sock',
  };
}, 60_000);

afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
  if (bin) cleanup(bin);
});

/**
 * The lines of a script's stdout without vault's `Success! ...` notes, which vault prints on stdout
 * (UI.Output) between the values the script extracts; the tests check those notes with toContain.
 */
const dataLines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('Success! '));

const run = (script: string, more: Record<string, string | undefined> = {}, input?: string) =>
  runScript(bin, script, { ...env, ...more }, input);

describe.skipIf(!existsSync('/usr/bin/jq') && !process.env.CI)('vault face: scripts in the vault CLI shapes', () => {
  it('transit: -format=json prints the whole envelope, jq reads .data.ciphertext; -field=plaintext decrypts', async () => {
    expect(jq, 'jq is needed (scripts/setup-test-env.sh installs it)').toBe(true);
    const r = await run(`
      vault secrets enable -path=app-transit transit
      vault write -f app-transit/keys/app
      CT=$(vault write -format=json app-transit/encrypt/app plaintext=$(echo -n "hello vault" | base64) | jq -r .data.ciphertext)
      echo "ct=$CT"
      vault write -format=json app-transit/encrypt/app plaintext=$(echo -n x | base64) | jq -c 'keys'
      vault write -field=plaintext app-transit/decrypt/app ciphertext="$CT" | base64 -d; echo
    `);
    expect(r.stdout).toContain('Success! Enabled the transit secrets engine at: app-transit/');
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = dataLines(r.stdout);
    expect(lines.find((l) => l.startsWith('ct='))).toMatch(/^ct=vault:v1:[A-Za-z0-9+/=]+$/);
    // api.Secret's fields (mount_type is omitempty: present when the server names the mount's type).
    expect(JSON.parse(lines.find((l) => l.startsWith('['))!)).toEqual([
      'data',
      'lease_duration',
      'lease_id',
      'mount_type',
      'renewable',
      'request_id',
      'warnings',
    ]);
    expect(lines[lines.length - 1]).toBe('hello vault');
  });

  it('tokens: token create -format=json | jq .auth.client_token, lookup, renew, capabilities, print token, boolean flags with values', async () => {
    const r = await run(`
      vault policy write reader - <<'EOF'
path "secret/data/*" { capabilities = ["read", "list"] }
EOF
      T=$(vault token create -format=json -policy=reader -orphan=true -no-default-policy=false -ttl=1h | jq -r .auth.client_token)
      echo "token=$T"
      vault token lookup -format=json "$T" | jq -r '.data.id, (.data.policies|join(","))'
      vault token create -field=token -policy=reader -no-default-policy=true | xargs -I{} vault token lookup -field=policies {}; echo
      vault token renew -format=json -increment=30m "$T" | jq -r '.auth.client_token == "'"$T"'"'
      vault token capabilities "$T" secret/data/app
      VAULT_TOKEN="$T" vault token capabilities secret/data/app
      VAULT_TOKEN="$T" vault print token
      vault token create -policy=reader -format=json | jq -r '.auth.policies|join(",")'
      vault token create -field=token_policies -policy=reader; echo
    `);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = dataLines(r.stdout);
    const token = out[0]!.slice('token='.length);
    expect(token).toMatch(/^hvs\./);
    expect(out[1]).toBe(token);
    expect(out[2]).toBe('default,reader');
    expect(out[3]).toBe('[reader]');
    expect(out[4]).toBe('true');
    expect(out[5]).toBe('list, read');
    expect(out[6]).toBe('list, read');
    expect(out[7]).toBe(token);
    expect(out[8]).toBe('default,reader');
    expect(out[9]).toBe('[default reader]');
  });

  it('AppRole in CI: -field=token and .auth.client_token from write auth/approle/login, login -method=approle', async () => {
    const r = await run(`
      vault auth enable approle
      vault write auth/approle/role/ci token_policies=default token_ttl=20m
      ROLE_ID=$(vault read -field=role_id auth/approle/role/ci/role-id)
      SECRET_ID=$(vault write -f -field=secret_id auth/approle/role/ci/secret-id)
      A=$(vault write -field=token auth/approle/login role_id="$ROLE_ID" secret_id="$SECRET_ID")
      B=$(vault write -format=json auth/approle/login role_id="$ROLE_ID" secret_id="$SECRET_ID" | jq -r .auth.client_token)
      vault write -field=token_accessor auth/approle/login role_id="$ROLE_ID" secret_id="$SECRET_ID" > /dev/null
      vault write -field=token_duration auth/approle/login role_id="$ROLE_ID" secret_id="$SECRET_ID"; echo
      C=$(vault login -format=json -no-store -method=approle role_id="$ROLE_ID" secret_id="$SECRET_ID" | jq -r .auth.client_token)
      D=$(vault login -token-only -method=approle role_id="$ROLE_ID" secret_id="$SECRET_ID")
      for t in "$A" "$B" "$C" "$D"; do VAULT_TOKEN="$t" vault token lookup -field=display_name; echo; done
      vault write auth/approle/login role_id="$ROLE_ID" secret_id="$SECRET_ID" | head -2
      vault write -field=nope auth/approle/login role_id="$ROLE_ID" secret_id="$SECRET_ID" || echo "exit=$?"
    `);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = dataLines(r.stdout);
    expect(out[0]).toBe('1200');
    expect(out.slice(1, 5)).toEqual(['approle', 'approle', 'approle', 'approle']);
    expect(out[5]).toMatch(/^Key\s+Value$/);
    expect(out[6]).toMatch(/^---\s+-----$/);
    expect(out[7]).toBe('exit=1');
    expect(r.stderr).toContain('Field "nope" not present in secret');
  });

  it('JWT in CI: vault write -field=token auth/jwt/login role=ci jwt=$CI_JOB_JWT', async () => {
    const { generateKeyPair, exportSPKI, SignJWT } = await import('jose');
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    writeFileSync(join(d.dir, 'ci-pub.pem'), await exportSPKI(publicKey));
    const jwt = await new SignJWT({ project: 'keyhold' })
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer('https://ci.example')
      .setAudience('keyhold')
      .setSubject('pipeline-42')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);
    const r = await run(
      `
      vault auth enable jwt
      vault write auth/jwt/config jwt_validation_pubkeys=@${join(d.dir, 'ci-pub.pem')} bound_issuer=https://ci.example
      vault write auth/jwt/role/ci role_type=jwt user_claim=sub bound_audiences=keyhold token_policies=default token_ttl=10m
      T=$(vault write -field=token auth/jwt/login role=ci jwt="$CI_JOB_JWT")
      VAULT_TOKEN="$T" vault token lookup -format=json | jq -r '.data.meta.role'
      vault write -format=json auth/jwt/login role=ci jwt="$CI_JOB_JWT" | jq -r '.auth.policies|join(",")'
      vault write -field=token_policies auth/jwt/login role=ci jwt="$CI_JOB_JWT"; echo
    `,
      { CI_JOB_JWT: jwt },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(dataLines(r.stdout)).toEqual(['ci', 'default', '[default]']);
  });

  it('write PATH - takes the JSON body on stdin; @file.json too', async () => {
    const file = join(d.dir, 'body.json');
    writeFileSync(file, JSON.stringify({ policy: 'path "kv/*" { capabilities = ["read"] }' }));
    const r = await run(`
      vault write sys/policy/from-stdin - <<EOF
{"policy": "path \\"secret/*\\" { capabilities = [\\"read\\"] }"}
EOF
      vault write sys/policy/from-file @${file}
      vault read -field=rules sys/policy/from-stdin; echo
      vault read -field=rules sys/policy/from-file; echo
      echo '{"plaintext": "'$(echo -n hi | base64)'"}' | vault write -format=json app-transit/encrypt/app - | jq -r '.data.ciphertext|startswith("vault:v1:")'
      echo 'not json' | vault write sys/policy/bad - || echo "exit=$?"
    `);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = dataLines(r.stdout);
    expect(out[0]).toBe('path "secret/*" { capabilities = ["read"] }');
    expect(out[1]).toBe('path "kv/*" { capabilities = ["read"] }');
    expect(out[2]).toBe('true');
    expect(out[3]).toBe('exit=1');
    expect(r.stderr).toContain('failed to parse JSON input from stdin');
  });

  it('KV: secrets enable kv is version 1, kv-v2 / -version=2 version 2; a deleted version prints its metadata and exits 0; rollback; enable-versioning; tune', async () => {
    const r = await run(`
      vault secrets enable kv
      vault read -field=options sys/mounts/kv; echo
      vault secrets enable -path=kv2 kv-v2
      vault secrets enable -path=kv3 -version=2 kv
      vault read -format=json sys/mounts/kv2 | jq -r .data.options.version
      vault read -format=json sys/mounts/kv3 | jq -r .data.options.version
      vault kv put kv/app user=admin > /dev/null
      vault kv get -field=user kv/app; echo
      vault kv put kv2/app pass=one > /dev/null
      vault kv put kv2/app pass=two > /dev/null
      vault kv delete kv2/app
      vault kv get kv2/app > "$KEYHOLD_HOME/deleted.txt"; echo "get-deleted=$?"
      grep -c "== Data ==" "$KEYHOLD_HOME/deleted.txt" || true
      vault kv get -format=json kv2/app | jq -r '.data.metadata.deletion_time != ""'
      vault kv rollback -version=1 kv2/app | grep -E '^version'
      vault kv get -field=pass kv2/app; echo
      vault kv get -version=3 -field=pass kv2/app; echo
      vault kv get kv2/missing || echo "missing=$?"
      vault kv enable-versioning kv/
      vault read -format=json sys/mounts/kv | jq -r .data.options.version
      vault secrets tune -description="team secrets" kv2/
      vault read -field=description sys/mounts/kv2; echo
    `);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = dataLines(r.stdout);
    expect(out[0]).toBe('map[version:1]');
    expect(out.slice(1, 3)).toEqual(['2', '2']);
    expect(out[3]).toBe('admin');
    expect(out[4]).toBe('get-deleted=0');
    expect(out[5]).toBe('0');
    expect(out[6]).toBe('true');
    expect(out[7]).toMatch(/^version\s+3$/);
    expect(out.slice(8, 10)).toEqual(['one', 'one']);
    expect(out[10]).toBe('missing=2');
    expect(out[11]).toBe('2');
    expect(out[12]).toBe('team secrets');
    expect(r.stdout).toContain('Success! Tuned the secrets engine at: kv/');
    expect(r.stdout).toContain('Success! Tuned the secrets engine at: kv2/');
  });

  it('response wrapping: -wrap-ttl then unwrap -format=json | jq .data', async () => {
    const r = await run(`
      W=$(vault write -wrap-ttl=60s -field=wrapping_token -f auth/approle/role/ci/secret-id)
      vault unwrap -format=json "$W" | jq -r '.data|keys|join(",")'
      vault unwrap "$W" || echo "second=$?"
    `);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = dataLines(r.stdout);
    expect(out[0]).toContain('secret_id');
    expect(out[0]).toContain('secret_id_accessor');
    expect(out[1]).toBe('second=2');
  });

  it('patch, secrets move, auth move, version-history', async () => {
    const r = await run(`
      vault secrets enable -path=movable kv-v2
      vault kv put movable/app a=1 b=2 > /dev/null
      vault patch movable/data/app data='{"b":"3"}' > /dev/null
      vault kv get -format=json movable/app | jq -c .data.data
      vault secrets move movable/ moved/
      vault kv get -field=b moved/app; echo
      vault auth enable -path=ci-login approle
      vault auth move ci-login/ ci-login2/
      vault auth list -format=json | jq -r 'keys[]' | grep -c '^ci-login2/$'
      vault version-history -format=json | jq -r '.keys|length > 0'
      vault version-history | head -1
      vault operator members | head -1
      vault list sys/policies/acl | head -3
    `);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = dataLines(r.stdout);
    expect(out[0]).toBe('{"a":"1","b":"3"}');
    expect(out[1]).toMatch(/^Started moving secrets engine movable\/ to moved\/, with migration ID \S+$/);
    expect(out[2]).toBe('3');
    expect(out[3]).toMatch(/^Started moving auth method auth\/ci-login\/ to auth\/ci-login2\//);
    expect(out.slice(4, 6)).toEqual(['1', 'true']);
    expect(out[6]).toMatch(/^Version\s+Installation Time\s+Build Date$/);
    expect(out[7]).toMatch(/^Host Name\s+API Address\s+Cluster Address\s+Active Node\s+Version/);
    expect(out.slice(8, 11)).toEqual(['Keys', '----', 'default']);
    expect(r.stdout).toContain('Success! Finished moving secrets engine movable/ to moved/');
  });

  it('leases: lookup and renew of an unknown lease exit 2, revoke exits 0', async () => {
    const r = await run(`
      vault lease lookup database/creds/ro/abc || echo "lookup=$?"
      vault lease renew -increment=1h database/creds/ro/abc || echo "renew=$?"
      vault lease revoke database/creds/ro/abc
    `);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(dataLines(r.stdout)).toEqual(['lookup=2', 'renew=2']);
    expect(r.stdout).toContain('Success! Revoked lease: database/creds/ro/abc');
  });

  it('audit enable file log_raw=true: accepted with one warning line, entries stay hashed', async () => {
    const log = join(d.dir, 'audit.log');
    const r = await run(`
      vault audit enable file file_path=${log} log_raw=true
      vault kv put kv2/audited secret=plain-value-123 > /dev/null
      vault audit list | grep -c file/
    `);
    expect(r.exitCode, r.stderr).toBe(0);
    const warnings = r.stderr.split('\n').filter((l) => l.startsWith('WARNING!'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('log_raw');
    expect(readFileSync(log, 'utf8')).not.toContain('plain-value-123');
  });

  it('environment: VAULT_FORMAT=json prints envelopes; -address and -tls-skip-verify are accepted; usage errors exit 1', async () => {
    const r = await run(`
      VAULT_FORMAT=json vault token lookup | jq -r '.data.policies[0]'
      VAULT_ADDR=http://127.0.0.1:1 vault -address=${d.tcp} -tls-skip-verify read -field=type sys/mounts/transit; echo
      vault token create -no-such-flag || echo "usage=$?"
      vault read secret/nothing-here || echo "notfound=$?"
    `);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(dataLines(r.stdout)).toEqual(['root', 'transit', 'usage=1', 'notfound=2']);
  });

  it('keyhold keeps its own face: same program run as keyhold prints its tables, json envelopes too (items 1-4)', async () => {
    const r = await run(`
      K=${bin}/../keyhold-face; mkdir -p "$K"; ln -sf "$(readlink ${bin}/vault)" "$K/keyhold"
      KEYHOLD_ADDR=${d.tcp} KEYHOLD_TOKEN=${d.token} "$K/keyhold" token create --format json | jq -r '.auth.client_token|startswith("hvs.")'
      KEYHOLD_ADDR=${d.tcp} KEYHOLD_TOKEN=${d.token} "$K/keyhold" token create | head -1
      KEYHOLD_ADDR=${d.tcp} KEYHOLD_TOKEN=${d.token} "$K/keyhold" --help | head -1
    `);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = dataLines(r.stdout);
    expect(out[0]).toBe('true');
    expect(out[1]).toMatch(/^Key\s+Value$/);
    expect(out[2]).toBe('Usage: keyhold [options] [command]');
  });
});
