import { describe, expect, it } from 'vitest';
import { ACL } from '../../../src/auth/acl.js';
import { parsePolicy } from '../../../src/auth/policies.js';

const acl = (...hcl: string[]) => new ACL(hcl.map((h, i) => parsePolicy(`p${i}`, h)));

describe('ACL glob matching', () => {
  it('denies by default', () => {
    const a = acl('path "secret/data/app" { capabilities = ["read"] }');
    expect(a.allowed('read', 'secret/data/other')).toBe(false);
    expect(a.allowed('update', 'secret/data/app')).toBe(false);
    expect(a.capabilities('nowhere')).toEqual(['deny']);
  });

  it('matches a trailing * as a prefix (not a segment boundary)', () => {
    const a = acl('path "secret/data/app*" { capabilities = ["read"] }');
    expect(a.allowed('read', 'secret/data/app')).toBe(true);
    expect(a.allowed('read', 'secret/data/apple')).toBe(true);
    expect(a.allowed('read', 'secret/data/app/x/y')).toBe(true);
    expect(a.allowed('read', 'secret/data/ap')).toBe(false);
  });

  it('matches + as exactly one segment', () => {
    const a = acl('path "secret/+/team/*" { capabilities = ["read"] }', 'path "kv/+/x" { capabilities = ["list"] }');
    expect(a.allowed('read', 'secret/data/team/a')).toBe(true);
    expect(a.allowed('read', 'secret/metadata/team/a/b')).toBe(true);
    expect(a.allowed('read', 'secret/data/other/team/a')).toBe(false);
    expect(a.allowed('list', 'kv/any/x')).toBe(true);
    expect(a.allowed('list', 'kv/a/b/x')).toBe(false);
    expect(a.allowed('list', 'kv/a/x/more')).toBe(false);
  });

  it('lets an exact path win over any glob', () => {
    const a = acl(
      'path "secret/*" { capabilities = ["read", "update"] }',
      'path "secret/locked" { capabilities = ["read"] }',
    );
    expect(a.allowed('update', 'secret/locked')).toBe(false);
    expect(a.allowed('update', 'secret/other')).toBe(true);
  });

  it('uses the most specific glob: later first wildcard, then no *, then fewer +, then longer', () => {
    // Rule 1: the first wildcard comes later.
    const r1 = acl('path "a/*" { capabilities = ["read"] }', 'path "a/b/*" { capabilities = ["deny"] }');
    expect(r1.allowed('read', 'a/b/c')).toBe(false);
    expect(r1.allowed('read', 'a/c')).toBe(true);
    // Rule 2: at the same position, a + segment (no trailing *) beats a *.
    const r2 = acl('path "a/*" { capabilities = ["read"] }', 'path "a/+" { capabilities = ["update"] }');
    expect(r2.allowed('update', 'a/x')).toBe(true);
    expect(r2.allowed('read', 'a/x')).toBe(false);
    expect(r2.allowed('read', 'a/x/y')).toBe(true);
    // Rule 3: fewer + segments.
    const r3 = acl('path "a/+/+" { capabilities = ["read"] }', 'path "a/+/c" { capabilities = ["update"] }');
    expect(r3.allowed('update', 'a/b/c')).toBe(true);
    expect(r3.allowed('read', 'a/b/c')).toBe(false);
    // Rule 4: longer pattern.
    const r4 = acl('path "a/b*" { capabilities = ["read"] }', 'path "a/bc*" { capabilities = ["update"] }');
    expect(r4.allowed('update', 'a/bcd')).toBe(true);
    expect(r4.allowed('read', 'a/bcd')).toBe(false);
    expect(r4.allowed('read', 'a/bx')).toBe(true);
  });

  it('merges capabilities of the same path across policies', () => {
    const a = acl('path "t/k" { capabilities = ["read"] }', 'path "t/k" { capabilities = ["update"] }');
    expect(a.allowed('read', 't/k')).toBe(true);
    expect(a.allowed('update', 't/k')).toBe(true);
    expect(a.capabilities('t/k')).toEqual(['read', 'update']);
  });

  it('lets deny win over allows on the same path, in any policy order', () => {
    const allow = 'path "secret/data/x" { capabilities = ["read", "update"] }';
    const deny = 'path "secret/data/x" { capabilities = ["deny"] }';
    for (const a of [acl(allow, deny), acl(deny, allow)]) {
      expect(a.allowed('read', 'secret/data/x')).toBe(false);
      expect(a.capabilities('secret/data/x')).toEqual(['deny']);
    }
    const globDeny = acl('path "secret/*" { capabilities = ["deny"] }', 'path "secret/*" { capabilities = ["read"] }');
    expect(globDeny.allowed('read', 'secret/a')).toBe(false);
  });

  it('grants everything to the root policy', () => {
    const a = new ACL([{ name: 'root', rules: [], raw: '' }]);
    expect(a.allowed('sudo', 'sys/anything')).toBe(true);
    expect(a.capabilities('x')).toEqual(['root']);
  });

  it('treats create and update as distinct capabilities (upsert needs create)', () => {
    const a = acl('path "transit/encrypt/*" { capabilities = ["update"] }');
    expect(a.allowed('update', 'transit/encrypt/k')).toBe(true);
    expect(a.allowed('create', 'transit/encrypt/k')).toBe(false);
  });
});
