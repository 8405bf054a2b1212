/**
 * Issue 34 items 8-9 through a `vault` symlink: `vault server -dev` with -dev-root-token-id and
 * -dev-listen-address (and their VAULT_DEV_* variables), mounting secret/ only as vault's does; `vault operator init` with no flags (5 shares,
 * threshold 3, `Unseal Key 1:` ... lines), then after a restart `vault status` exits 2 and three
 * `vault operator unseal KEY` calls unseal it, each with one warning line about the key on argv.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, freePort, httpReq, startDaemon, type Daemon } from '../support/daemon.js';
import { runScript, vaultBinDir } from './vault-face-support.js';

const bin = vaultBinDir();
const dirs: string[] = [bin];
const procs: ChildProcess[] = [];

afterAll(async () => {
  for (const p of procs) {
    if (p.exitCode === null) {
      const gone = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      await gone;
    }
  }
  for (const dir of dirs) cleanup(dir);
});

/** Start `vault server ARGS` (the symlink) and wait until `http://ADDR` answers. */
async function vaultServer(
  args: string[],
  addr: string,
  env: Record<string, string> = {},
): Promise<{ proc: ChildProcess; out: () => string }> {
  const dir = mkdtempSync(join(tmpdir(), 'keyhold-vault-dev-'));
  dirs.push(dir);
  const proc = spawn(join(bin, 'vault'), ['server', ...args, '--socket', join(dir, 's.sock'), '--log-level', 'warn'], {
    env: { ...process.env, KEYHOLD_HOME: dir, PATH: `${process.env.PATH}`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  procs.push(proc);
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  for (let i = 0; i < 200; i++) {
    if (proc.exitCode !== null) throw new Error(`server exited: ${out}`);
    try {
      await httpReq({ base: `http://${addr}` }, 'GET', 'sys/health');
      return { proc, out: () => out };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`server did not answer on ${addr}: ${out}`);
}

/**
 * `vaultServer` on a free port: a port found free can be taken by another process before the server
 * binds it (the kernel hands ephemeral ports to outgoing connections too), so EADDRINUSE tries another.
 */
async function vaultServerOnFreePort(
  make: (addr: string) => { args: string[]; env?: Record<string, string> },
): Promise<{ addr: string; srv: { proc: ChildProcess; out: () => string } }> {
  for (let attempt = 1; ; attempt++) {
    const addr = `127.0.0.1:${freePort()}`;
    const { args, env } = make(addr);
    try {
      return { addr, srv: await vaultServer(args, addr, env) };
    } catch (e) {
      if (attempt >= 5 || !/EADDRINUSE/.test((e as Error).message)) throw e;
    }
  }
}

describe('vault face: server -dev', () => {
  it('-dev-root-token-id and -dev-listen-address', async () => {
    const { addr, srv } = await vaultServerOnFreePort((a) => ({
      args: ['-dev', '-dev-root-token-id=dev-only-token', `-dev-listen-address=${a}`],
    }));
    expect(srv.out()).toContain(`$ export VAULT_ADDR='http://${addr}'`);
    expect(srv.out()).toMatch(/Root Token: dev-only-token/);
    const r = await runScript(bin, 'vault token lookup -field=id; echo; vault status > /dev/null; echo "status=$?"', {
      VAULT_ADDR: `http://${addr}`,
      VAULT_TOKEN: 'dev-only-token',
      HOME: bin,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(['dev-only-token', 'status=0']);
    // The dev server mounts secret/ only, as vault's: the tutorials' next step enables transit.
    const t = await runScript(
      bin,
      [
        "vault secrets list -format=json | jq -r 'keys[]' | sort | paste -sd ' '",
        'vault secrets enable transit',
        'vault write -f transit/keys/orders > /dev/null',
        'vault write -field=ciphertext transit/encrypt/orders plaintext=$(base64 <<< "4111 1111 1111 1111") | cut -c1-9',
      ].join(' && '),
      { VAULT_ADDR: `http://${addr}`, VAULT_TOKEN: 'dev-only-token', HOME: bin },
    );
    expect(t.exitCode, t.stderr).toBe(0);
    expect(t.stdout.trim().split('\n')).toEqual([
      'cubbyhole/ secret/ sys/',
      'Success! Enabled the transit secrets engine at: transit/',
      'vault:v1:',
    ]);
  });

  it('VAULT_DEV_ROOT_TOKEN_ID and VAULT_DEV_LISTEN_ADDRESS', async () => {
    const { addr } = await vaultServerOnFreePort((a) => ({
      args: ['-dev'],
      env: { VAULT_DEV_ROOT_TOKEN_ID: 'from-env', VAULT_DEV_LISTEN_ADDRESS: a },
    }));
    const r = await runScript(bin, 'vault token lookup -format=json | jq -r .data.id', {
      VAULT_ADDR: `http://${addr}`,
      VAULT_TOKEN: 'from-env',
      HOME: bin,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('from-env');
  });
});

describe('vault face: operator init and unseal', () => {
  let d: Daemon;
  afterAll(async () => {
    await d?.stop();
    if (d) cleanup(d.dir);
  });

  it('init makes 5 shares, threshold 3; unseal KEY (argument) three times after a restart', async () => {
    d = await startDaemon({ dev: false, args: ['--keychain', 'none'] });
    const env = { VAULT_ADDR: d.addr, KEYHOLD_HOME: d.dir, HOME: d.dir };
    const init = await runScript(
      bin,
      `vault operator init -status || echo "status=$?"
       vault operator init > ${d.dir}/init.txt
       grep -c '^Unseal Key [1-5]: ' ${d.dir}/init.txt
       grep -q 'Initial Root Token: hvs\\.' ${d.dir}/init.txt && echo root-token
       grep -q 'key threshold of 3' ${d.dir}/init.txt && echo threshold
       vault operator init -status`,
      env,
    );
    expect(init.exitCode, init.stderr).toBe(0);
    expect(init.stdout.trim().split('\n')).toEqual([
      'Vault is not initialized',
      'status=2',
      '5',
      'root-token',
      'threshold',
      'Vault is initialized',
    ]);

    await d.stop();
    d = await startDaemon({ dev: false, dir: d.dir, args: ['--keychain', 'none'] });
    const unseal = await runScript(
      bin,
      `vault status > /dev/null || echo "sealed=$?"
       for i in 1 2 3; do
         vault operator unseal "$(grep "Unseal Key $i:" ${d.dir}/init.txt | awk '{print $NF}')" | grep -E '^(Sealed|Unseal Progress) '
       done
       vault status | grep -E '^Sealed '
       export VAULT_TOKEN=$(grep 'Initial Root Token:' ${d.dir}/init.txt | awk '{print $NF}')
       vault token lookup -field=policies; echo`,
      env,
    );
    expect(unseal.exitCode, unseal.stderr).toBe(0);
    const lines = unseal.stdout
      .trim()
      .split('\n')
      .map((l) => l.replace(/\s+/g, ' '));
    expect(lines).toEqual([
      'sealed=2',
      'Sealed true',
      'Unseal Progress 1/3',
      'Sealed true',
      'Unseal Progress 2/3',
      'Sealed false',
      'Sealed false',
      '[root]',
    ]);
    expect(unseal.stderr.split('\n').filter((l) => l.startsWith('WARNING!'))).toHaveLength(3);
  });
});
