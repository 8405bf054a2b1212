/** `reported_vault_version` in the server config (HCL and JSON) and KEYHOLD_REPORTED_VAULT_VERSION (issue 31 part 1). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfigFile, resolveConfig } from '../../../src/server/daemon.js';
import { versionFields } from '../../../src/engines/sys/reported-version.js';

const dir = mkdtempSync(join(tmpdir(), 'keyhold-reported-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function file(name: string, text: string): string {
  const p = join(dir, `${n++}-${name}`);
  writeFileSync(p, text);
  return p;
}

describe('reported_vault_version', () => {
  it('is read from HCL and from both JSON shapes', () => {
    expect(loadConfigFile(file('a.hcl', 'reported_vault_version = "1.19.0"\n')).reported_vault_version).toBe('1.19.0');
    expect(
      loadConfigFile(file('b.json', JSON.stringify({ reported_vault_version: '2.2.0+ent' }))).reported_vault_version,
    ).toBe('2.2.0+ent');
    expect(
      loadConfigFile(
        file('c.json', JSON.stringify({ api_addr: 'http://127.0.0.1:8200', reported_vault_version: '2.0.0' })),
      ).reported_vault_version,
    ).toBe('2.0.0');
  });

  it.each(['1.19', 'latest', '', '1.19.0 ', 'x1.2.3'])('refuses %j naming the key', (v) => {
    expect(() => loadConfigFile(file('bad.hcl', `reported_vault_version = ${JSON.stringify(v)}\n`))).toThrow(
      /reported_vault_version/,
    );
    expect(() => loadConfigFile(file('bad.json', JSON.stringify({ reported_vault_version: v })))).toThrow(
      /reported_vault_version/,
    );
  });

  it('KEYHOLD_REPORTED_VAULT_VERSION wins over the file and is checked too', () => {
    const cfg = file('d.hcl', 'reported_vault_version = "1.19.0"\n');
    expect(resolveConfig({ config: cfg, dev: true }, { KEYHOLD_HOME: dir }).reported_vault_version).toBe('1.19.0');
    expect(
      resolveConfig({ config: cfg, dev: true }, { KEYHOLD_HOME: dir, KEYHOLD_REPORTED_VAULT_VERSION: '2.2.0' })
        .reported_vault_version,
    ).toBe('2.2.0');
    expect(resolveConfig({ dev: true }, { KEYHOLD_HOME: dir }).reported_vault_version).toBeUndefined();
    expect(() => resolveConfig({ dev: true }, { KEYHOLD_HOME: dir, KEYHOLD_REPORTED_VAULT_VERSION: 'two' })).toThrow(
      ConfigError,
    );
  });

  it('seal-status and health fields: the reported version, with keyhold_version beside it', () => {
    expect(versionFields('0.1.0', undefined)).toEqual({ version: '0.1.0' });
    expect(versionFields('0.1.0', 'v2.2.0')).toEqual({ version: '2.2.0', keyhold_version: '0.1.0' });
  });

  it('KEYHOLD_PKCS11_INLINE_MAX_US is refused at start when it is not a number of microseconds', () => {
    expect(() => resolveConfig({ dev: true }, { KEYHOLD_HOME: dir, KEYHOLD_PKCS11_INLINE_MAX_US: 'fast' })).toThrow(
      /KEYHOLD_PKCS11_INLINE_MAX_US must be a number of microseconds.*"fast"/,
    );
    expect(() => resolveConfig({ dev: true }, { KEYHOLD_HOME: dir, KEYHOLD_PKCS11_INLINE_MAX_US: '-5' })).toThrow(
      ConfigError,
    );
    expect(resolveConfig({ dev: true }, { KEYHOLD_HOME: dir, KEYHOLD_PKCS11_INLINE_MAX_US: '0' }).dev).toBe(true);
    expect(resolveConfig({ dev: true }, { KEYHOLD_HOME: dir, KEYHOLD_PKCS11_INLINE_MAX_US: '120' }).dev).toBe(true);
  });
});
