import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, PolicyStore, parsePolicy } from '../../../src/auth/policies.js';
import { InmemBackend } from '../../../src/storage/inmem.js';

describe('policy parser: HCL', () => {
  it('reads several path blocks with all three comment styles', () => {
    const p = parsePolicy(
      'app',
      `# hash comment
       // slash comment
       /* block
          comment with path "nope" { capabilities = ["sudo"] } */
       path "transit/encrypt/app" {
         capabilities = ["update"] # trailing
       }
       path "transit/decrypt/app" { capabilities = ["update", "read",] }
       path "secret/data/+/config" {
         capabilities = ["read"]
         allowed_parameters = { "*" = [] }
         min_wrapping_ttl = "1s"
       }`,
    );
    expect(p.rules).toEqual([
      { path: 'transit/encrypt/app', capabilities: ['update'] },
      { path: 'transit/decrypt/app', capabilities: ['update', 'read'] },
      { path: 'secret/data/+/config', capabilities: ['read'], allowedParameters: { '*': [] }, minWrappingTtl: 1 },
    ]);
  });

  it('accepts the legacy policy = "read" form and an empty block', () => {
    const p = parsePolicy('l', 'path "a/*" { policy = "write" }\npath "b" {}');
    expect(p.rules[0]!.capabilities).toEqual(['create', 'read', 'update', 'delete', 'list']);
    expect(p.rules[1]!.capabilities).toEqual([]);
  });

  it('strips a leading slash from paths', () => {
    expect(parsePolicy('s', 'path "/sys/mounts" { capabilities = ["read"] }').rules[0]!.path).toBe('sys/mounts');
  });

  it('rejects unknown capabilities, unknown blocks and syntax errors with a 400 naming the line', () => {
    expect(() => parsePolicy('x', 'path "a" { capabilities = ["reed"] }')).toThrow(/invalid capability "reed"/);
    expect(() => parsePolicy('x', 'storage "a" { }')).toThrow(/invalid key "storage" on line 1/);
    expect(() => parsePolicy('x', 'path "a" {\n capabilities = ["read"]\n')).toThrow(/missing "}"/);
    expect(() => parsePolicy('x', 'path "a" {\n capabilities = ["read" "list"]\n}')).toThrow(/line 2/);
    expect(() => parsePolicy('x', 'path "a\n" {}')).toThrow(/unterminated string/);
    expect(() => parsePolicy('x', '/* open')).toThrow(/unterminated comment/);
    expect(() => parsePolicy('x', 'path "a" { capabilities = "read" }')).toThrow(/capabilities must be a list/);
    try {
      parsePolicy('x', 'path "a" { capabilities = ["reed"] }');
    } catch (e) {
      expect((e as { status: number }).status).toBe(400);
    }
  });

  it('parses the built-in default policy', () => {
    const p = parsePolicy('default', DEFAULT_POLICY);
    expect(p.rules.map((r) => r.path)).toContain('auth/token/lookup-self');
  });
});

describe('policy parser: JSON', () => {
  it('reads the object form and the list-of-objects form', () => {
    const a = parsePolicy(
      'j',
      JSON.stringify({
        path: { 'secret/*': { capabilities: ['read', 'list'] }, 'sys/mounts': { capabilities: ['read'] } },
      }),
    );
    expect(a.rules).toEqual([
      { path: 'secret/*', capabilities: ['read', 'list'] },
      { path: 'sys/mounts', capabilities: ['read'] },
    ]);
    const b = parsePolicy('j', JSON.stringify({ path: [{ 'a/+': { capabilities: ['deny'] } }] }));
    expect(b.rules).toEqual([{ path: 'a/+', capabilities: ['deny'] }]);
  });

  it('rejects malformed JSON and bad capabilities', () => {
    expect(() => parsePolicy('j', '{"path": ')).toThrow(/failed to parse policy: unexpected end of input/);
    expect(() => parsePolicy('j', '{"path": {"a": {"capabilities": ["fly"]}}}')).toThrow(/invalid capability "fly"/);
  });

  it('gives the same rules for equivalent HCL and JSON', () => {
    const hcl = parsePolicy(
      'h',
      'path "transit/keys/*" { capabilities = ["create", "read"] }\npath "transit/keys" { capabilities = ["list"] }',
    );
    const json = parsePolicy(
      'j',
      '{"path":{"transit/keys/*":{"capabilities":["create","read"]},"transit/keys":{"capabilities":["list"]}}}',
    );
    expect(json.rules).toEqual(hcl.rules);
  });
});

describe('policy store', () => {
  it('lowercases names, keeps the source text, and protects root and default', async () => {
    const { Barrier } = await import('../../../src/storage/barrier.js');
    const b = new Barrier(new InmemBackend());
    b.unseal(Buffer.alloc(32, 1));
    const store = new PolicyStore(b);
    const text = '# mine\npath "a" { capabilities = ["read"] }\n';
    await store.put('MyPolicy', text);
    expect((await store.get('mypolicy'))?.raw).toBe(text);
    expect((await store.get('MYPOLICY'))?.name).toBe('mypolicy');
    expect(await store.list()).toEqual(['default', 'mypolicy', 'root']);
    await expect(store.put('root', text)).rejects.toThrow(/root/);
    await expect(store.delete('default')).rejects.toThrow(/default/);
    await expect(store.put('a/b', text)).rejects.toThrow(/^name:/);
    await store.delete('MYPOLICY');
    expect(await store.get('mypolicy')).toBeNull();
    expect((await store.get('default'))?.rules.length).toBeGreaterThan(0);
  });
});

describe('policy store: policies stored by an older keyhold', () => {
  it('a stored policy that no longer parses grants nothing (fail closed), is reported, and stays readable', async () => {
    const { Barrier } = await import('../../../src/storage/barrier.js');
    const { putJSON } = await import('../../../src/storage/backend.js');
    const b = new Barrier(new InmemBackend());
    b.unseal(Buffer.alloc(32, 2));
    const reported: string[] = [];
    const store = new PolicyStore(b, (name, reason) => reported.push(`${name}: ${reason}`));
    const old = 'path "secret/*" {\n  capabilities = ["read"]\n  mfa_methods = ["totp"]\n}';
    await putJSON(b, 'policy/legacy', { raw: old });
    const p = await store.get('legacy');
    expect(p?.rules).toEqual([]);
    expect(p?.raw).toBe(old);
    expect(reported).toEqual([expect.stringMatching(/^legacy: failed to parse policy: .*mfa_methods/)]);
  });
});
