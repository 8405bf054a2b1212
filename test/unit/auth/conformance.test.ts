// ACL conformance (issue 18 part 9): table-driven cases taken from Vault's documented policy examples
// (website/content/docs/concepts/policies.mdx, "PM" below) and from the source functions they encode
// (vault/acl.go NewACL, AllowOperation, CheckAllowedFromNonExactPaths; vault/policy.go ParseACLPolicy;
// sdk/helper/identitytpl PopulateString). Each case names its source.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ACL, type AclRequest } from '../../../src/auth/acl.js';
import { DEFAULT_POLICY, decodePolicyText, parsePolicy } from '../../../src/auth/policies.js';
import type { TokenIdentity } from '../../../src/framework/context.js';

type Op = AclRequest['operation'];
interface Case {
  cite: string;
  policies: string[];
  checks: Array<[Op, string, boolean, Record<string, unknown>?, number?]>;
}

const acl = (texts: string[], identity?: TokenIdentity) =>
  new ACL(
    texts.map((t, i) => parsePolicy(`p${i}`, t)),
    identity,
    1_700_000_000_000,
  );

const CASES: Case[] = [
  {
    cite: 'PM "Policy Syntax": a simple read grant; deny by default',
    policies: ['path "secret/foo" { capabilities = ["read"] }'],
    checks: [
      ['read', 'secret/foo', true],
      ['update', 'secret/foo', false],
      ['delete', 'secret/foo', false],
      ['read', 'secret/food', false],
      ['read', 'secret/foo/bar', false],
    ],
  },
  {
    cite: 'PM "Policy Syntax": secret/* grant with secret/super-secret deny taking precedence',
    policies: [
      'path "secret/*" { capabilities = ["create", "read", "update", "patch", "delete", "list"] }\npath "secret/super-secret" { capabilities = ["deny"] }',
    ],
    checks: [
      ['read', 'secret/anything', true],
      ['patch', 'secret/anything', true],
      ['read', 'secret/super-secret', false],
      ['update', 'secret/super-secret', false],
    ],
  },
  {
    cite: 'PM "Policy Syntax": secret/restricted may only contain foo (any value) and bar (zip or zap)',
    policies: [
      'path "secret/restricted" {\n capabilities = ["create"]\n allowed_parameters = {\n  "foo" = []\n  "bar" = ["zip", "zap"]\n }\n}',
    ],
    checks: [
      ['create', 'secret/restricted', true, { foo: 'anything', bar: 'zip' }],
      ['create', 'secret/restricted', true, { bar: 'zap' }],
      ['create', 'secret/restricted', false, { bar: 'zop' }],
      ['create', 'secret/restricted', false, { baz: '1' }],
      ['create', 'secret/restricted', true, {}],
    ],
  },
  {
    cite: 'PM "Policy Syntax": exact path, trailing-* prefix and zip-* prefix globs',
    policies: [
      'path "secret/foo" { capabilities = ["read"] }\npath "secret/bar/*" { capabilities = ["read"] }\npath "secret/zip-*" { capabilities = ["read"] }',
    ],
    checks: [
      ['read', 'secret/bar/zip', true],
      ['read', 'secret/bar/zip/zap', true],
      ['read', 'secret/bars/zip', false],
      ['read', 'secret/zip-zap', true],
      ['read', 'secret/zip-zap/zong', true],
      ['read', 'secret/zip/zap', false],
    ],
  },
  {
    cite: 'PM "Policy Syntax": + matches exactly one segment (secret/+/teamb, secret/+/+/teamb)',
    policies: [
      'path "secret/+/teamb" { capabilities = ["read"] }\npath "secret/+/+/teamb" { capabilities = ["read"] }',
    ],
    checks: [
      ['read', 'secret/foo/teamb', true],
      ['read', 'secret/foo/bar/teamb', true],
      ['read', 'secret/teamb', false],
      ['read', 'secret/foo/teamb/x', false],
    ],
  },
  {
    cite: 'PM priority rule 1 (first wildcard later wins) and acl.go less(): secret/* vs secret/+/+/foo/* (rule 3)',
    policies: ['path "secret/*" { capabilities = ["read"] }', 'path "secret/+/+/foo/*" { capabilities = ["update"] }'],
    checks: [
      ['read', 'secret/a/b/foo/c', true],
      ['update', 'secret/a/b/foo/c', false],
    ],
  },
  {
    cite: 'PM priority rule 1, the other way round: secret/a/* beats secret/+/* (first wildcard later)',
    policies: ['path "secret/+/*" { capabilities = ["read"] }', 'path "secret/a/*" { capabilities = ["update"] }'],
    checks: [
      ['update', 'secret/a/x', true],
      ['read', 'secret/a/x', false],
      ['read', 'secret/b/x', true],
    ],
  },
  {
    cite: 'PM priority rule 2: a/+ (no trailing *) beats a/* at the same position, and both ways for other paths',
    policies: ['path "a/*" { capabilities = ["read"] }', 'path "a/+" { capabilities = ["update"] }'],
    checks: [
      ['update', 'a/x', true],
      ['read', 'a/x', false],
      ['read', 'a/x/y', true],
      ['update', 'a/x/y', false],
    ],
  },
  {
    cite: 'PM priority rule 3: fewer + segments win (a/+/c over a/+/+)',
    policies: ['path "a/+/+" { capabilities = ["read"] }', 'path "a/+/c" { capabilities = ["update"] }'],
    checks: [
      ['update', 'a/b/c', true],
      ['read', 'a/b/c', false],
      ['read', 'a/b/d', true],
    ],
  },
  {
    cite: 'PM priority rule 4: longer wins (a/bc* over a/b*); radix LongestPrefix in CheckAllowedFromNonExactPaths',
    policies: ['path "a/b*" { capabilities = ["read"] }', 'path "a/bc*" { capabilities = ["update"] }'],
    checks: [
      ['update', 'a/bcd', true],
      ['read', 'a/bcd', false],
      ['read', 'a/bx', true],
    ],
  },
  {
    cite: 'PM note: same pattern in several policies takes the union (NewACL bitmap OR)',
    policies: ['path "t/k" { capabilities = ["read"] }', 'path "t/k" { capabilities = ["update"] }'],
    checks: [
      ['read', 't/k', true],
      ['update', 't/k', true],
      ['delete', 't/k', false],
    ],
  },
  {
    cite: 'PM "deny ... always takes precedence" / NewACL: deny merged in either order, sudo included',
    policies: ['path "s/x" { capabilities = ["deny"] }', 'path "s/x" { capabilities = ["read", "sudo"] }'],
    checks: [['read', 's/x', false]],
  },
  {
    cite: 'PM "required_parameters": bar and baz must be specified (AllowOperation checks required first)',
    policies: ['path "secret/foo" {\n capabilities = ["create"]\n required_parameters = ["bar", "baz"]\n}'],
    checks: [
      ['create', 'secret/foo', true, { bar: 1, baz: 2 }],
      ['create', 'secret/foo', false, { bar: 1 }],
      ['create', 'secret/foo', false, {}],
    ],
  },
  {
    cite: 'PM allowed_parameters with "*" = []: other parameters allowed, listed ones still restricted',
    policies: [
      'path "secret/foo" {\n capabilities = ["create"]\n allowed_parameters = {\n  "bar" = ["zip", "zap"]\n  "*" = []\n }\n}',
    ],
    checks: [
      ['create', 'secret/foo', true, { bar: 'zip', other: 'x' }],
      ['create', 'secret/foo', false, { bar: 'nope', other: 'x' }],
    ],
  },
  {
    cite: 'PM globbing caveat: "baz/*" matches "baz/quux" and, split on commas, "baz/quux,baz/x" (valueInAllowedParameterList)',
    policies: [
      'path "secret/foo" {\n capabilities = ["create", "update", "patch"]\n allowed_parameters = { "bar" = ["baz/*"] }\n}',
    ],
    checks: [
      ['create', 'secret/foo', true, { bar: 'baz/quux' }],
      ['update', 'secret/foo', true, { bar: 'baz/quux,baz/x' }],
      // The documented surprise: the whole string matches "baz/*" before any comma split.
      ['update', 'secret/foo', true, { bar: 'baz/quux,wibble' }],
      ['update', 'secret/foo', false, { bar: 'wibble,baz/quux' }],
      ['patch', 'secret/foo', true, { bar: ['baz/a', 'baz/b'] }],
      ['patch', 'secret/foo', false, { bar: ['baz/a', 'nope'] }],
    ],
  },
  {
    cite: 'PM "denied_parameters": empty list denies the parameter; populated list denies those values; "*" denies all',
    policies: [
      'path "d/empty" {\n capabilities = ["create"]\n denied_parameters = { "bar" = [] }\n}\npath "d/values" {\n capabilities = ["create"]\n denied_parameters = { "bar" = ["zip", "zap"] }\n}\npath "d/all" {\n capabilities = ["create"]\n denied_parameters = { "*" = [] }\n}',
    ],
    checks: [
      ['create', 'd/empty', true, { foo: 1 }],
      ['create', 'd/empty', false, { bar: 'x' }],
      ['create', 'd/values', true, { bar: 'zop' }],
      ['create', 'd/values', false, { bar: 'zap' }],
      ['create', 'd/values', false, { bar: 'ok,zip' }],
      ['create', 'd/all', false, { anything: 1 }],
      // AllowOperation: "If there are no data fields, allow" comes before the denied check.
      ['create', 'd/all', true, {}],
    ],
  },
  {
    cite: 'PM "denied_parameters ... take precedence over allowed_parameters"; names compared lower-cased (policy.go ToLower)',
    policies: [
      'path "p" {\n capabilities = ["update"]\n allowed_parameters = { "Bar" = [] }\n denied_parameters = { "bar" = ["x"] }\n}',
    ],
    checks: [
      ['update', 'p', true, { BAR: 'y' }],
      ['update', 'p', false, { bar: 'x' }],
    ],
  },
  {
    cite: 'PM value globbing: "foo-*" prefix; strutil.GlobbedStringsMatch suffix and both ends',
    policies: [
      'path "g" {\n capabilities = ["update"]\n allowed_parameters = { "a" = ["foo-*"] "b" = ["*-end"] "c" = ["*mid*"] "d" = ["*"] }\n}',
    ],
    checks: [
      ['update', 'g', true, { a: 'foo-1' }],
      ['update', 'g', false, { a: 'fo-1' }],
      ['update', 'g', true, { b: 'the-end' }],
      ['update', 'g', true, { c: 'amidst' }],
      // A lone "*" value is not a glob (GlobbedStringsMatch: items shorter than 2 compare equal).
      ['update', 'g', true, { d: '*' }],
      ['update', 'g', false, { d: 'x' }],
    ],
  },
  {
    cite: 'AllowOperation: parameter checks apply to read/create/update/patch, not to list or delete',
    policies: [
      'path "q/*" {\n capabilities = ["read", "delete", "list"]\n allowed_parameters = { "version" = ["1"] }\n}',
    ],
    checks: [
      ['read', 'q/a', true, { version: '1' }],
      ['read', 'q/a', false, { version: '2' }],
      ['delete', 'q/a', true, { versions: '2' }],
      ['list', 'q/', true, { other: 'x' }],
    ],
  },
  {
    cite: 'PM "Required Response Wrapping TTLs" example: min 1s makes wrapping mandatory, max 90s bounds it',
    policies: [
      'path "auth/approle/role/my-role/secret-id" {\n capabilities = ["create", "update"]\n min_wrapping_ttl = "1s"\n max_wrapping_ttl = "90s"\n}',
    ],
    checks: [
      ['update', 'auth/approle/role/my-role/secret-id', false],
      ['update', 'auth/approle/role/my-role/secret-id', true, {}, 60],
      ['update', 'auth/approle/role/my-role/secret-id', false, {}, 91],
      ['update', 'auth/approle/role/my-role/secret-id', true, {}, 1],
    ],
  },
  {
    cite: 'PM "if paths are merged from different stanzas, the lowest value specified for each is the value that will result" (NewACL)',
    policies: [
      'path "w" {\n capabilities = ["read"]\n min_wrapping_ttl = "30s"\n max_wrapping_ttl = "10m"\n}',
      'path "w" {\n capabilities = ["read"]\n min_wrapping_ttl = "10s"\n max_wrapping_ttl = "1m"\n}',
    ],
    checks: [
      ['read', 'w', true, {}, 15],
      ['read', 'w', false, {}, 5],
      ['read', 'w', false, {}, 120],
    ],
  },
  {
    cite: 'AllowOperation LIST: the no-slash exact rule grants LIST, + rules without the slash match, trailing-slash rules too',
    policies: [
      'path "secret/metadata" { capabilities = ["list"] }\npath "kv/+/keys" { capabilities = ["list"] }\npath "other/" { capabilities = ["list"] }',
    ],
    checks: [
      ['list', 'secret/metadata/', true],
      ['list', 'kv/a/keys/', true],
      ['list', 'other/', true],
      ['read', 'secret/metadata', false],
      ['list', 'secret/metadata/x/', false],
    ],
  },
  {
    cite: 'AllowOperation LIST: the no-slash path is tried first, so secret/app (no glob) beats secret/app/* for LIST of secret/app/',
    policies: ['path "secret/app*" { capabilities = ["list"] }\npath "secret/app/*" { capabilities = ["deny"] }'],
    checks: [['list', 'secret/app/', true]],
  },
  {
    cite: 'NewACL: a deny stanza clears parameter lists of the same path; min/max checked per stanza at write (policy.go)',
    policies: [
      'path "z" {\n capabilities = ["update"]\n allowed_parameters = { "a" = [] }\n}',
      'path "z" { capabilities = ["deny"] }',
    ],
    checks: [['update', 'z', false, { a: 1 }]],
  },
  {
    cite: 'NewACL parameter merge: an empty list on either side wins (any value); value lists append',
    policies: [
      'path "m" {\n capabilities = ["update"]\n allowed_parameters = { "a" = ["x"] }\n}',
      'path "m" {\n capabilities = ["update"]\n allowed_parameters = { "a" = ["y"] "b" = [] }\n}',
    ],
    checks: [
      ['update', 'm', true, { a: 'x' }],
      ['update', 'm', true, { a: 'y', b: 'anything' }],
      ['update', 'm', false, { a: 'z' }],
    ],
  },
  {
    cite: 'policy.go: legacy policy = "read" maps to read+list, "write" adds create/update/delete, "deny" replaces',
    policies: [
      'path "l/r" { policy = "read" }\npath "l/w" { policy = "write" }\npath "l/d" {\n capabilities = ["read"]\n policy = "deny"\n}',
    ],
    checks: [
      ['read', 'l/r', true],
      ['list', 'l/r/', true],
      ['update', 'l/r', false],
      ['create', 'l/w', true],
      ['read', 'l/d', false],
    ],
  },
  {
    cite: 'PM "patch (PATCH)": patch is its own capability; update does not grant it',
    policies: ['path "k/data/*" { capabilities = ["update"] }'],
    checks: [
      ['update', 'k/data/x', true],
      ['patch', 'k/data/x', false],
    ],
  },
];

describe("ACL conformance with Vault's documented examples", () => {
  for (const c of CASES) {
    it(c.cite, () => {
      const a = acl(c.policies);
      for (const [operation, path, want, data, wrapTtl] of c.checks) {
        expect(
          a.check({ operation, path, data, wrapTtl }).allowed,
          `${operation} ${path} ${JSON.stringify(data ?? {})} wrap=${wrapTtl}`,
        ).toBe(want);
      }
    });
  }

  it('sudo reaches root-protected paths only with the capability (AllowOperation RootPrivs)', () => {
    const a = acl([
      'path "sys/audit/*" { capabilities = ["update", "sudo"] }\npath "sys/seal" { capabilities = ["update"] }',
    ]);
    expect(a.check({ operation: 'update', path: 'sys/audit/file' })).toEqual({ allowed: true, rootPrivs: true });
    expect(a.check({ operation: 'update', path: 'sys/seal' })).toEqual({ allowed: true, rootPrivs: false });
  });

  it('sys/capabilities uses LIST lookup and Vault\'s "deny" for nothing (acl.go Capabilities)', () => {
    const a = acl([
      'path "secret/metadata" { capabilities = ["list"] }\npath "x/*" { capabilities = ["read", "sudo", "update"] }',
    ]);
    expect(a.capabilities('secret/metadata/')).toEqual(['list']);
    expect(a.capabilities('x/y')).toEqual(['read', 'sudo', 'update']);
    expect(a.capabilities('nowhere')).toEqual(['deny']);
  });
});

describe('ParseACLPolicy refusals and acceptances', () => {
  it.each([
    ['path "a" {\n capabilites = ["read"]\n}', /path "a": invalid key "capabilites" on line 2/],
    ['paths "a" {}', /invalid key "paths" on line 1/],
    ['path "a/+*" { capabilities = ["read"] }', /invalid use of wildcards/],
    [
      'path "a" {\n capabilities = ["read"]\n allowed_parameters = { "*" = ["x"] }\n}',
      /the only value "\*" can take is \[\]/,
    ],
    ['path "a" {\n capabilities = ["read"]\n allowed_parameters = { "ke*y" = [] }\n}', /non-tail wildcards/],
    ['path "a" {\n capabilities = ["read"]\n required_parameters = ["a*"]\n}', /wildcard is not permitted/],
    ['path "a" {\n capabilities = ["read"]\n control_group = { ttl = "1h" }\n}', /control_group.*line 3/],
    [
      'path "a" { capabilities = ["read"] min_wrapping_ttl = "2m" max_wrapping_ttl = "1m" }',
      /max_wrapping_ttl cannot be less than min_wrapping_ttl/,
    ],
    ['path "a/{{identity.entity.id}" { capabilities = ["read"] }', /unbalanced templating characters/],
    [
      '{"path": {"a": {"capabilities": ["read"], "allowed_parameters": {"x": "y"}}}}',
      /"x" must be a list of values at line 1/,
    ],
  ])('refuses %j', (text, msg) => {
    expect(() => parsePolicy('x', text)).toThrow(msg);
  });

  it('accepts every documented key, subscribe and recover, heredocs, JSON and a base64 body', () => {
    const p = parsePolicy(
      'ok',
      `name = "ok"
path "a/*" {
  comment = "documented"
  capabilities = ["read", "subscribe", "recover"]
  subscribe_event_types = ["kv*"]
  allowed_parameters = { "x" = [1, true, "s"] }
  denied_parameters { "y" = [] }
  required_parameters = ["x"]
  min_wrapping_ttl = 1
  max_wrapping_ttl = "90s"
}
path "b" {
  comment = <<EOT
a heredoc comment
EOT
  policy = "read"
}`,
    );
    expect(p.rules[0]).toMatchObject({
      path: 'a/*',
      capabilities: ['read', 'subscribe', 'recover'],
      minWrappingTtl: 1,
      maxWrappingTtl: 90,
      requiredParameters: ['x'],
      allowedParameters: { x: [1, true, 's'] },
      deniedParameters: { y: [] },
    });
    expect(p.rules[1]).toMatchObject({ path: 'b', capabilities: ['read', 'list'] });
    const text = 'path "c" { capabilities = ["read"] }';
    expect(decodePolicyText(Buffer.from(text).toString('base64'))).toBe(text);
    expect(decodePolicyText(text)).toBe(text);
  });

  it("the default policy is Vault's text (policy_store.go) and grants the built-ins", () => {
    const a = acl([DEFAULT_POLICY]);
    for (const [op, p] of [
      ['read', 'auth/token/lookup-self'],
      ['update', 'sys/capabilities-self'],
      ['create', 'cubbyhole/x'],
      ['list', 'cubbyhole/'],
      ['update', 'sys/wrapping/wrap'],
      ['update', 'sys/wrapping/unwrap'],
      ['update', 'sys/wrapping/lookup'],
      ['update', 'sys/tools/hash/sha2-256'],
      ['update', 'sys/tools/random/32'],
      ['update', 'sys/leases/lookup'],
      ['update', 'sys/leases/renew'],
      ['read', 'sys/internal/ui/resultant-acl'],
    ] as Array<[Op, string]>) {
      expect(a.check({ operation: op, path: p }).allowed, `${op} ${p}`).toBe(true);
    }
    expect(a.check({ operation: 'update', path: 'sys/wrapping/rewrap' }).allowed).toBe(false);
  });
});

describe('templated policies (identitytpl PopulateString, ACL mode)', () => {
  const ident: TokenIdentity = {
    entityId: 'ent-1',
    entityName: 'alice',
    entityMetadata: { team: 'payments' },
    aliases: [
      {
        mountAccessor: 'auth_jwt_1234abcd',
        name: 'repo:org/app:ref:refs/heads/main',
        metadata: { repository: 'org-app' },
      },
    ],
    groupIds: ['g-1'],
    groupNames: ['ops'],
    groupMetadata: { 'g-1': { tier: 'gold' } },
  };

  it('resolves entity, metadata, alias and group directives per identity (PM "Templated Policies" examples)', () => {
    const a = acl(
      [
        'path "secret/data/{{identity.entity.id}}/*" { capabilities = ["read"] }',
        'path "secret/data/ci/{{identity.entity.aliases.auth_jwt_1234abcd.metadata.repository}}/*" { capabilities = ["read"] }',
        'path "secret/data/by-name/{{ identity.entity.name }}" { capabilities = ["read"] }',
        'path "secret/data/team/{{identity.entity.metadata.team}}/*" { capabilities = ["read"] }',
        'path "secret/data/groups/{{identity.groups.ids.g-1.name}}/*" { capabilities = ["read"] }',
        'path "secret/data/tier/{{identity.groups.names.ops.metadata.tier}}" { capabilities = ["read"] }',
      ],
      ident,
    );
    expect(a.check({ operation: 'read', path: 'secret/data/ent-1/x' }).allowed).toBe(true);
    expect(a.check({ operation: 'read', path: 'secret/data/ent-2/x' }).allowed).toBe(false);
    expect(a.check({ operation: 'read', path: 'secret/data/ci/org-app/deploy' }).allowed).toBe(true);
    expect(a.check({ operation: 'read', path: 'secret/data/ci/other/deploy' }).allowed).toBe(false);
    expect(a.check({ operation: 'read', path: 'secret/data/by-name/alice' }).allowed).toBe(true);
    expect(a.check({ operation: 'read', path: 'secret/data/team/payments/k' }).allowed).toBe(true);
    expect(a.check({ operation: 'read', path: 'secret/data/groups/ops/k' }).allowed).toBe(true);
    expect(a.check({ operation: 'read', path: 'secret/data/tier/gold' }).allowed).toBe(true);
  });

  it('a directive that cannot resolve drops only that rule: no identity, unknown alias, missing metadata, wildcard result', () => {
    const texts = [
      'path "secret/data/{{identity.entity.id}}/*" { capabilities = ["read"] }',
      'path "secret/data/{{identity.entity.aliases.auth_other.name}}" { capabilities = ["read"] }',
      'path "secret/data/{{identity.entity.metadata.nope}}" { capabilities = ["read"] }',
      'path "secret/data/w/{{identity.entity.metadata.glob}}" { capabilities = ["read"] }',
      'path "plain" { capabilities = ["read"] }',
    ];
    const none = acl(texts);
    expect(none.check({ operation: 'read', path: 'plain' }).allowed).toBe(true);
    expect(none.check({ operation: 'read', path: 'secret/data//x' }).allowed).toBe(false);
    const globby = acl(texts, { ...ident, entityMetadata: { glob: '*' } });
    expect(globby.check({ operation: 'read', path: 'secret/data/w/anything' }).allowed).toBe(false);
    expect(globby.check({ operation: 'read', path: 'secret/data/w/*' }).allowed).toBe(false);
    expect(globby.check({ operation: 'read', path: 'secret/data/ent-1/x' }).allowed).toBe(true);
  });

  it('the default policy lets a token read its own entity only', () => {
    const a = acl([DEFAULT_POLICY], ident);
    expect(a.check({ operation: 'read', path: 'identity/entity/id/ent-1' }).allowed).toBe(true);
    expect(a.check({ operation: 'read', path: 'identity/entity/name/alice' }).allowed).toBe(true);
    expect(a.check({ operation: 'read', path: 'identity/entity/id/ent-2' }).allowed).toBe(false);
  });
});

// A policy set never grants more than the union of its rules: whatever the merged ACL allows on a
// path, some single policy of the set allows on its own (capability-wise), and nothing is allowed
// where no rule of any policy matches.
describe('property: a policy set grants no more than the union of its policies', () => {
  const seg = fc.constantFrom('a', 'b', 'c', 'ab');
  const pattern = fc
    .tuple(fc.array(fc.oneof(seg, fc.constant('+')), { minLength: 1, maxLength: 3 }), fc.constantFrom('', '*', '/*'))
    .map(([parts, tail]) => parts.join('/') + tail)
    .filter((p) => !p.includes('+*'));
  const caps = fc.subarray(['create', 'read', 'update', 'delete', 'list', 'patch', 'sudo', 'deny'], { minLength: 1 });
  const rule = fc.tuple(pattern, caps).map(([p, c]) => `path "${p}" { capabilities = ${JSON.stringify(c)} }`);
  const policyText = fc.array(rule, { minLength: 1, maxLength: 4 }).map((rs) => rs.join('\n'));
  const reqPath = fc.array(seg, { minLength: 1, maxLength: 4 }).map((p) => p.join('/'));
  const op = fc.constantFrom<Op>('create', 'read', 'update', 'delete', 'list', 'patch');

  it('holds for random policy sets, paths and operations', () => {
    fc.assert(
      fc.property(fc.array(policyText, { minLength: 1, maxLength: 4 }), reqPath, op, (texts, path, operation) => {
        const p = operation === 'list' ? path + '/' : path;
        const merged = acl(texts).check({ operation, path: p }).allowed;
        if (!merged) return true;
        return texts.some((t) => acl([t]).check({ operation, path: p }).allowed);
      }),
      { numRuns: 400 },
    );
  });

  it('a deny on the deciding pattern in any policy denies for the set', () => {
    fc.assert(
      fc.property(fc.array(policyText, { minLength: 1, maxLength: 3 }), reqPath, op, (texts, path, operation) => {
        const withDeny = [...texts, `path "${path}" { capabilities = ["deny"] }`];
        return acl(withDeny).check({ operation, path }).allowed === false;
      }),
      { numRuns: 300 },
    );
  });
});

describe('property: HCL and JSON spellings of a policy mean the same', () => {
  it('parses equal rules from both forms', () => {
    const name = fc.constantFrom('a', 'b/c', 'd/+', 'e/*', 'f/+/g*');
    const capsArb = fc.subarray(['create', 'read', 'update', 'delete', 'list', 'patch', 'sudo'], { minLength: 1 });
    const values = fc.array(fc.constantFrom('x', 'y*', '*z'), { maxLength: 2 });
    const block = fc.record({
      path: name,
      caps: capsArb,
      allowed: fc.option(fc.dictionary(fc.constantFrom('p', 'q'), values), { nil: undefined }),
      min: fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.uniqueArray(block, { selector: (b) => b.path, minLength: 1, maxLength: 4 }), (blocks) => {
        const hcl = blocks
          .map((b) => {
            const lines = [`path "${b.path}" {`, `  capabilities = ${JSON.stringify(b.caps)}`];
            if (b.allowed)
              lines.push(
                `  allowed_parameters = {${Object.entries(b.allowed)
                  .map(([k, v]) => ` "${k}" = ${JSON.stringify(v)}`)
                  .join('')} }`,
              );
            if (b.min) lines.push(`  min_wrapping_ttl = ${b.min}`);
            return [...lines, '}'].join('\n');
          })
          .join('\n');
        const json = JSON.stringify({
          path: Object.fromEntries(
            blocks.map((b) => [
              b.path,
              {
                capabilities: b.caps,
                ...(b.allowed ? { allowed_parameters: b.allowed } : {}),
                ...(b.min ? { min_wrapping_ttl: b.min } : {}),
              },
            ]),
          ),
        });
        expect(parsePolicy('j', json).rules).toEqual(parsePolicy('h', hcl).rules);
      }),
      { numRuns: 200 },
    );
  });
});
