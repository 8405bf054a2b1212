import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

const dirs: string[] = [];
const daemons: Daemon[] = [];
afterAll(async () => {
  for (const d of daemons) await d.kill();
  for (const dir of dirs) cleanup(dir);
});

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(p, ...walk(p));
    else out.push(p);
  }
  return out;
}

async function fresh(): Promise<{ d: Daemon; dir: string; root: string; recovery: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'keyhold-storage-'));
  dirs.push(dir);
  const d = await startDaemon({ dev: false, dir, args: ['--keychain', 'none'] });
  daemons.push(d);
  const init = await d.req('POST', 'sys/init', { keychain: false }, { token: null });
  expect(init.status).toBe(200);
  return { d, dir, root: init.body.root_token, recovery: init.body.keys[0] };
}

describe('storage at rest', () => {
  it('holds no plaintext: policies, tokens, mount descriptions, secrets and the master key never appear on disk', async () => {
    const { d, dir, root, recovery } = await fresh();
    const marker = `marker-${randomBytes(8).toString('hex')}`;
    // Policy names are storage keys (visible as file names, as in Vault); their bodies are not.
    const pol = `pol-${randomBytes(4).toString('hex')}`;
    expect(
      (
        await d.req(
          'PUT',
          `sys/policies/acl/${pol}`,
          { policy: `path "secret/${marker}" { capabilities = ["read"] }` },
          { token: root },
        )
      ).status,
    ).toBe(204);
    const child = (
      await d.req(
        'POST',
        'auth/token/create',
        { policies: [pol], display_name: marker, meta: { owner: marker } },
        { token: root },
      )
    ).body.auth;
    expect(
      (await d.req('POST', `sys/mounts/${marker}`, { type: 'transit', description: `desc-${marker}` }, { token: root }))
        .status,
    ).toBe(204);
    expect((await d.req('POST', 'sys/mounts/kvm', { type: 'kv-v2' }, { token: root })).status).toBe(204);
    // KV is another team's engine: include its secret when the route exists.
    const kv = await d.req('POST', 'kvm/data/app', { data: { password: `pw-${marker}` } }, { token: root });
    expect((await d.req('POST', `${marker}/keys/k1`, {}, { token: root })).status).toBe(200);
    expect(await d.stop()).toBe(0);
    daemons.splice(daemons.indexOf(d), 1);

    const secrets = [marker, root, child.client_token, child.accessor, recovery, `pw-${marker}`, 'secret/' + marker];
    const master = Buffer.from(recovery, 'base64');
    const files = walk(join(dir, 'data')).filter((p) => statSync(p).isFile());
    // The log holds every record (key paths and values) in segment files.
    expect(files.some((f) => f.endsWith('.seg'))).toBe(true);
    for (const f of files) {
      const bytes = readFileSync(f);
      for (const s of secrets) {
        expect(bytes.includes(Buffer.from(s)), `${s} in ${f}`).toBe(false);
        expect(bytes.includes(Buffer.from(Buffer.from(s).toString('base64'))), `base64 of ${s} in ${f}`).toBe(false);
      }
      expect(bytes.includes(master), `master key bytes in ${f}`).toBe(false);
      // Nor do key paths (inside the log now): mounts live under their UUID, tokens and accessors under salted hashes.
      for (const s of [marker, root, child.client_token, child.accessor])
        expect(f.includes(s), `${s} in file name ${f}`).toBe(false);
    }
    expect(kv.status === 200 || kv.status === 404 || kv.status === 405).toBe(true);
    // Records 0600 and folders 0700.
    for (const p of walk(join(dir, 'data')))
      expect(statSync(p).mode & 0o777).toBe(statSync(p).isDirectory() ? 0o700 : 0o600);
  });

  it('keeps every acknowledged write across a kill -9 in the middle of a burst', async () => {
    const { d, dir, root, recovery } = await fresh();
    const acked: number[] = [];
    let killed = false;
    let next = 0;
    const worker = async () => {
      while (!killed && next < 3000) {
        const i = next++;
        try {
          const r = await d.req(
            'PUT',
            `sys/policies/acl/burst-${i}`,
            { policy: `path "burst/${i}" { capabilities = ["read"] }` },
            { token: root },
          );
          if (r.status === 204) acked.push(i);
        } catch {
          /* connection cut by the kill: not acknowledged */
        }
      }
    };
    const workers = Array.from({ length: 12 }, worker);
    while (acked.length < 200) await new Promise((r) => setTimeout(r, 5));
    await d.kill();
    killed = true;
    await Promise.all(workers);
    daemons.splice(daemons.indexOf(d), 1);
    expect(acked.length).toBeGreaterThanOrEqual(200);

    const again = await startDaemon({ dev: false, dir, args: ['--keychain', 'none'] });
    daemons.push(again);
    expect((await again.req('POST', 'sys/unseal', { key: recovery }, { token: null })).body.sealed).toBe(false);
    const listed: string[] = (await again.req('LIST', 'sys/policies/acl', undefined, { token: root })).body.data.keys;
    for (const i of acked) {
      expect(listed).toContain(`burst-${i}`);
    }
    // Every record present is readable and intact (acknowledged or not), and the root token survived.
    for (const name of listed.filter((n) => n.startsWith('burst-'))) {
      const r = await again.req('GET', `sys/policies/acl/${name}`, undefined, { token: root });
      expect(r.status, name).toBe(200);
      expect(r.body.data.policy).toBe(`path "burst/${name.slice(6)}" { capabilities = ["read"] }`);
    }
    expect((await again.req('GET', 'sys/mounts', undefined, { token: root })).status).toBe(200);
    expect(await again.stop()).toBe(0);
    daemons.splice(daemons.indexOf(again), 1);
  });
});

describe('storage lock', () => {
  it('refuses a second daemon on the same storage with a clear message, and frees the lock on stop', async () => {
    const { d, dir } = await fresh();
    const second = await startDaemon({
      dev: false,
      dir: mkdtempSync(join(tmpdir(), 'keyhold-second-')),
      args: ['--keychain', 'none', '--storage-path', join(dir, 'data')],
      wait: false,
    });
    dirs.push(second.dir);
    const code = await new Promise<number | null>((r) => second.proc.once('exit', (c) => r(c)));
    expect(code).toBe(1);
    expect(second.output()).toMatch(
      new RegExp(
        `^Error: storage at ${join(dir, 'data').replace(/[/.]/g, '\\$&')} is in use by another keyhold daemon \\(pid ${d.proc.pid}\\)`,
        'm',
      ),
    );
    expect(await d.stop()).toBe(0);
    daemons.splice(daemons.indexOf(d), 1);
    expect(readdirSync(join(dir, 'data'))).not.toContain('keyhold.lock');
    const third = await startDaemon({ dev: false, dir, args: ['--keychain', 'none'] });
    daemons.push(third);
    expect((await third.req('GET', 'sys/seal-status', undefined, { token: null })).body.initialized).toBe(true);
    expect(await third.stop()).toBe(0);
    daemons.splice(daemons.indexOf(third), 1);
  });
});
