/**
 * KV v2 on file storage (non-dev daemon, no keychain): nothing secret reaches the disk in clear (values,
 * secret names, custom metadata), and secrets survive a restart.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

/** Every file under `dir`, with its path relative to `dir`. */
function walk(dir: string, rel = ''): { rel: string; abs: string }[] {
  const out: { rel: string; abs: string }[] = [];
  for (const name of readdirSync(join(dir, rel))) {
    const r = rel ? `${rel}/${name}` : name;
    const abs = join(dir, r);
    if (statSync(abs).isDirectory()) out.push(...walk(dir, r));
    else out.push({ rel: r, abs });
  }
  return out;
}

const VALUE = 'PLAINTEXT-SECRET-VALUE-7f3a9c';
const NAME = 'payroll-ceo-salary';
const META = 'owner-alice-custom-meta';

let d: Daemon | undefined;
let dir: string | undefined;
afterAll(async () => {
  await d?.kill();
  if (dir) cleanup(dir);
});

async function unseal(daemon: Daemon, key: string): Promise<void> {
  const r = await daemon.req('POST', 'sys/unseal', { key }, { token: null });
  expect(r.status).toBe(200);
  expect(r.body.sealed).toBe(false);
}

describe('KV v2 on file storage', () => {
  it('keeps values, secret names and custom metadata off the disk in clear, and survives a restart', async () => {
    d = await startDaemon({ dev: false, args: ['--keychain', 'none'] });
    dir = d.dir;
    const init = await d.req(
      'POST',
      'sys/init',
      { secret_shares: 1, secret_threshold: 1, keychain: false },
      { token: null },
    );
    expect(init.status).toBe(200);
    const key = init.body.keys[0] as string;
    const root = init.body.root_token as string;
    await unseal(d, key);
    expect(
      (await d.req('POST', 'sys/mounts/vault-kv', { type: 'kv', options: { version: '2' } }, { token: root })).status,
    ).toBe(204);
    const w = await d.req(
      'POST',
      `vault-kv/data/team/${NAME}`,
      { data: { amount: VALUE, base64: Buffer.from(VALUE).toString('base64') } },
      { token: root },
    );
    expect(w.status).toBe(200);
    await d.req('POST', `vault-kv/data/team/${NAME}`, { data: { amount: VALUE + '-v2' } }, { token: root });
    expect(
      (await d.req('POST', `vault-kv/metadata/team/${NAME}`, { custom_metadata: { note: META } }, { token: root }))
        .status,
    ).toBe(204);
    await d.stop();

    const files = walk(join(dir, 'data'));
    // The log holds every record (key paths and values) in segment files.
    expect(files.some((f) => f.abs.endsWith('.seg'))).toBe(true);
    const needles = [
      VALUE,
      NAME,
      META,
      Buffer.from(VALUE).toString('base64'),
      Buffer.from(VALUE, 'utf8').toString('hex'),
    ];
    for (const f of files) {
      for (const n of needles) expect(f.rel, `file name ${f.rel}`).not.toContain(n);
      const content = readFileSync(f.abs);
      for (const n of needles) expect(content.includes(Buffer.from(n)), `${n} in ${f.rel}`).toBe(false);
      expect(f.rel.split('/'), 'folder name "team" in clear').not.toContain('team');
      expect(content.includes(Buffer.from('team/')), 'key path "team/" in clear').toBe(false);
    }

    d = await startDaemon({ dev: false, dir, args: ['--keychain', 'none'] });
    await unseal(d, key);
    const r = await d.req('GET', `vault-kv/data/team/${NAME}?version=1`, undefined, { token: root });
    expect(r.status).toBe(200);
    expect(r.body.data.data.amount).toBe(VALUE);
    expect(r.body.data.metadata.custom_metadata).toEqual({ note: META });
    expect((await d.req('LIST', 'vault-kv/metadata/team', undefined, { token: root })).body.data.keys).toEqual([NAME]);
  });
});
