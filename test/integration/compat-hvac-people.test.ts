/**
 * hvac's people-login calls (userpass, github, cert) replayed by test/compat/hvac_people.py (hvac
 * cannot be installed here; see test/compat/hvac_like.py) against a real daemon with a TLS listener,
 * hvac's mock GitHub behaviour (test/fakes/github-api.ts) and a client certificate from an
 * independent PKI (test/support/test-pki.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HvacMockGithub } from '../fakes/github-api.js';
import { ROOT, cleanup, startDaemon, type Daemon } from '../support/daemon.js';
import { type Issued, TestPki } from '../support/test-pki.js';

let d: Daemon;
let dir: string;
let mock: HvacMockGithub;
let ca: Issued;
let client: Issued;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keyhold-hvac-people-'));
  const pki = await new TestPki(dir).init();
  ca = await pki.issue({ name: 'CN=hvac CA', ca: true });
  const server = await pki.issue({ name: 'CN=localhost', issuer: ca, dns: ['localhost'], ips: ['127.0.0.1'] });
  client = await pki.issue({ name: 'CN=hvac-client', issuer: ca, emails: ['hvac@example.com'] });
  const config = join(dir, 'tls.hcl');
  writeFileSync(
    config,
    `listener "tcp" {\n  address = "127.0.0.1:0"\n  tls_cert_file = "${server.certFile}"\n  tls_key_file = "${server.keyFile}"\n}\n`,
  );
  d = await startDaemon({ args: ['--config', config] });
  for (let i = 0; i < 100 && !d.tcp; i++) {
    d.tcp = /Listening on: (https:\/\/[^\s]+)/.exec(d.output())?.[1];
    if (!d.tcp) await new Promise((r) => setTimeout(r, 20));
  }
  mock = await new HvacMockGithub().start();
}, 60_000);
afterAll(async () => {
  await d?.stop();
  await mock?.stop();
  if (d) cleanup(d.dir);
  if (dir) cleanup(dir);
});

describe('hvac people logins (test/compat/hvac_people.py)', () => {
  it("passes every replayed hvac call: userpass, github (against hvac's mock GitHub), cert over mTLS", async () => {
    const r = await execa(
      'python3',
      [
        join(ROOT, 'test', 'compat', 'hvac_people.py'),
        d.tcp!,
        d.token,
        ca.certFile,
        client.certFile,
        client.keyFile,
        `http://localhost:${mock.server.port}/`,
      ],
      { reject: false, timeout: 90_000 },
    );
    const lines = r.stdout.split('\n');
    const failed = lines.filter((l) => l.startsWith('FAIL'));
    expect(failed, r.stdout + r.stderr).toEqual([]);
    const summary = lines.find((l) => l.startsWith('summary'));
    console.log(`hvac people replay: ${summary}`);
    expect(summary).toMatch(/^summary passed=(\d+) failed=0$/);
    expect(Number(/passed=(\d+)/.exec(summary!)![1])).toBeGreaterThanOrEqual(25);
    expect(r.exitCode).toBe(0);
  }, 120_000);
});
