/**
 * The agent's configuration reader on the committed fixtures (test/fixtures/agent: together every
 * stanza and option Vault Agent documents for auto-auth, sinks, templates, exec, proxy and cache),
 * HCL1's numbers (`mode = 0640` is octal), several files, and the errors a wrong config gets.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../../src/agent/config.js';
import { authMethod } from '../../../src/agent/auth/methods.js';

const FIX = resolve(import.meta.dirname, '..', '..', 'fixtures', 'agent');
const tmp = mkdtempSync(join(tmpdir(), 'kh-agent-cfg-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const write = (name: string, text: string) => {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
};

describe('fixtures', () => {
  it('approle-templates.hcl: approle, two sinks (0640 octal, wrapped), template_config, two templates', () => {
    const c = loadAgentConfig([join(FIX, 'approle-templates.hcl')]);
    expect(c.pidFile).toBe('./agent.pid');
    expect(c.vault).toMatchObject({ address: 'http://127.0.0.1:8200', numRetries: 5, tlsSkipVerify: false });
    expect(c.autoAuth!.method).toMatchObject({
      type: 'approle',
      mountPath: 'auth/approle',
      minBackoff: 1,
      maxBackoff: 10,
      exitOnErr: false,
    });
    expect(c.autoAuth!.sinks).toEqual([
      { path: './token', mode: 0o640, wrapTtl: undefined },
      { path: './token.wrapped', mode: 0o600, wrapTtl: 300 },
    ]);
    expect(c.templateConfig).toEqual({ staticSecretRenderInterval: 1, exitOnRetryFailure: true });
    expect(c.templates[0]).toMatchObject({
      source: './app.ctmpl',
      destination: './out/app.conf',
      perms: 0o600,
      command: ['/bin/sh', '-c', 'echo rendered >> ./commands.log'],
      commandTimeout: 10,
      errorOnMissingKey: true,
      backup: true,
    });
    expect(c.templates[1]).toMatchObject({
      leftDelim: '<%',
      rightDelim: '%>',
      command: ['sh', '-c', 'echo user-rendered >> ./commands.log'],
      commandTimeout: 5,
    });
    expect(() => authMethod(c.autoAuth!.method)).not.toThrow();
  });

  it('jwt-ci.hcl: method and sink by type key, exit_after_auth, heredoc template', () => {
    const c = loadAgentConfig([join(FIX, 'jwt-ci.hcl')]);
    expect(c.exitAfterAuth).toBe(true);
    expect(c.autoAuth!.method).toMatchObject({
      type: 'jwt',
      mountPath: 'auth/jwt',
      config: { path: './ci-token.jwt', role: 'ci', remove_jwt_after_reading: false },
    });
    expect(c.autoAuth!.sinks).toEqual([{ path: './vault-token', mode: 0o640, wrapTtl: undefined }]);
    expect(c.templates[0]!.contents).toBe(
      '{{- with secret "secret/data/app" }}\nDEPLOY_USER={{ .Data.data.user }}\nDEPLOY_KEY={{ .Data.data.password | base64Encode }}\n{{- end }}\n',
    );
  });

  it('exec-env.hcl: token_file, env_template, exec', () => {
    const c = loadAgentConfig([join(FIX, 'exec-env.hcl')]);
    expect(c.autoAuth!.method).toMatchObject({ type: 'token_file', mountPath: 'auth/token' });
    expect(c.envTemplates.map((e) => [e.name, e.errorOnMissingKey])).toEqual([
      ['DB_PASSWORD', true],
      ['DB_USER', false],
    ]);
    expect(c.exec).toEqual({
      command: ['node', './child.js'],
      restartOnSecretChanges: 'always',
      restartStopSignal: 'SIGTERM',
    });
  });

  it('proxy-cache.hcl: api_proxy force, cache, unix and tcp listeners', () => {
    const c = loadAgentConfig([join(FIX, 'proxy-cache.hcl')]);
    expect(c.apiProxy.useAutoAuthToken).toBe('force');
    expect(c.cache).toEqual({ cacheStaticSecrets: true });
    expect(c.listeners).toEqual([
      {
        type: 'unix',
        address: './agent.sock',
        socketMode: 0o660,
        tlsCertFile: undefined,
        tlsKeyFile: undefined,
        requireRequestHeader: false,
        enableQuit: false,
      },
      {
        type: 'tcp',
        address: '127.0.0.1:18207',
        socketMode: undefined,
        tlsCertFile: undefined,
        tlsKeyFile: undefined,
        requireRequestHeader: true,
        enableQuit: true,
      },
    ]);
  });

  it('approle-wrapped.json: JSON form, method wrap_ttl, secret_id_response_wrapping_path, decimal mode', () => {
    const c = loadAgentConfig([join(FIX, 'approle-wrapped.json')]);
    expect(c.autoAuth!.method).toMatchObject({
      type: 'approle',
      wrapTtl: 120,
      config: { secret_id_response_wrapping_path: 'auth/approle/role/web/secret-id' },
    });
    expect(c.autoAuth!.sinks[0]!.mode).toBe(0o640);
  });

  it('cert.hcl: cert method, vault TLS settings, cache { use_auto_auth_token }', () => {
    const c = loadAgentConfig([join(FIX, 'cert.hcl')]);
    expect(c.vault).toMatchObject({ caCert: './ca.pem', clientCert: './client.pem', clientKey: './client-key.pem' });
    expect(c.autoAuth!.method).toMatchObject({ type: 'cert', config: { name: 'web', reload: true } });
    expect(c.apiProxy.useAutoAuthToken).toBe(true);
  });
});

describe('reading configs', () => {
  it('several -config files merge: later scalars win, templates and listeners add up; a directory loads its files', () => {
    const a = write(
      'a.hcl',
      'auto_auth { method "token_file" { config = { token_file_path = "./t" } } }\ntemplate { contents = "a" destination = "./a" }\nlistener "unix" { address = "./s1" }\napi_proxy { use_auto_auth_token = true }',
    );
    const b = write(
      'b.json',
      JSON.stringify({
        template: [{ contents: 'b', destination: './b' }],
        listener: { unix: { address: './s2' } },
        exit_after_auth: false,
      }),
    );
    const c = loadAgentConfig([a, b]);
    expect(c.templates.map((t) => t.destination)).toEqual(['./a', './b']);
    expect(c.listeners.map((l) => l.address)).toEqual(['./s1', './s2']);
  });

  it('refuses what it cannot do, naming the stanza and key', () => {
    const bad = (text: string) => () => loadAgentConfig([write(`bad-${Math.random()}.hcl`, text)]);
    const auth = 'auto_auth { method "token_file" { config = { token_file_path = "./t" } } ';
    expect(bad(`${auth} sink "file" { dh_type = "curve25519" config = { path = "./x" } } }`)).toThrow(
      /sink "file": dh_type .* not supported/,
    );
    expect(bad(`${auth} }\ntemplate { contents = "x" destination = "./y" colour = 1 }`)).toThrow(
      /template\[0\]: unknown key "colour"/,
    );
    expect(bad('auto_auth { method "kubernetes" { config = {} } }')).toThrow(/method "kubernetes": unsupported method/);
    expect(bad(`${auth} }\ntemplate { destination = "./y" }`)).toThrow(/exactly one of source and contents/);
    expect(bad(`${auth} sink "file" { config = { path = "./x", mode = "rw" } } }`)).toThrow(/mode must be a file mode/);
    expect(bad(`${auth} }\nexec { command = ["x"] }`)).toThrow(/exec: needs at least one env_template/);
    expect(bad('template {')).toThrow(/bad-.*line 1/);
    expect(bad('listener "tcp" { address = "127.0.0.1:1" }\ncache {}')).toThrow(
      /listener "tcp": set tls_disable = true/,
    );
  });
});
