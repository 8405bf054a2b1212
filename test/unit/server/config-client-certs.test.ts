/** The client-certificate keys of a TCP listener (Vault's names) from the config file to the listener spec. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../src/server/daemon.js';

const dir = mkdtempSync(join(tmpdir(), 'keyhold-cfg-certs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(listener: string): string {
  const p = join(dir, `c${Math.random().toString(36).slice(2)}.hcl`);
  writeFileSync(
    p,
    `listener "tcp" {\n  address = "127.0.0.1:8200"\n  tls_cert_file = "/c.pem"\n  tls_key_file = "/k.pem"\n${listener}}\n`,
  );
  return p;
}
const tcpSpec = (p: string) =>
  resolveConfig({ config: p, noSocket: true }, {}).listenerSpecs.find((s) => s.type === 'tcp');

describe('listener client certificates', () => {
  it('passes tls_require_and_verify_client_cert and tls_client_ca_file to the listener', () => {
    expect(
      tcpSpec(file('  tls_require_and_verify_client_cert = true\n  tls_client_ca_file = "/ca.pem"\n')),
    ).toMatchObject({ tlsRequireClientCert: true, tlsClientCaFile: '/ca.pem' });
    expect(tcpSpec(file('  tls_disable_client_certs = "true"\n'))).toMatchObject({ tlsDisableClientCerts: true });
    const plain = tcpSpec(file(''));
    expect(plain).not.toHaveProperty('tlsRequireClientCert');
    expect(plain).not.toHaveProperty('tlsDisableClientCerts');
  });

  it('refuses contradictions and a missing CA file with the line and key named', () => {
    expect(() => tcpSpec(file('  tls_require_and_verify_client_cert = true\n'))).toThrow(
      /tls_require_and_verify_client_cert needs tls_client_ca_file/,
    );
    expect(() =>
      tcpSpec(
        file(
          '  tls_require_and_verify_client_cert = true\n  tls_client_ca_file = "/ca.pem"\n  tls_disable_client_certs = true\n',
        ),
      ),
    ).toThrow(/exclude each other/);
    expect(() => tcpSpec(file('  tls_client_ca_file = ""\n'))).toThrow(/tls_client_ca_file/);
  });
});
