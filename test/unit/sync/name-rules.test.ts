import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { NAME_RULES, nameProblem, normalizeName, valueProblem } from '../../../src/sync/name-rules.js';
import { DESTINATION_TYPE_IDS } from '../../../src/sync/types.js';

/** The provider regexes of reference sync-wire.md 3.6, written out independently of the rule table. */
const PROVIDER_REGEX: Record<string, RegExp> = {
  'provider-a-sm': /^[A-Za-z0-9/_+=.@-]{1,512}$/,
  'provider-b-kv': /^[0-9a-zA-Z-]{1,127}$/,
  'provider-c-sm': /^[A-Za-z0-9_-]{1,255}$/,
  repohost: /^(?!GITHUB_)[A-Z_][A-Z0-9_]*$/,
  'hosting-project': /^[A-Za-z_][A-Za-z0-9_]*$/,
};

describe('external name rules', () => {
  it('normalizes into each character set (slashes, dots, spaces, unicode)', () => {
    expect(normalizeName('provider-b-kv', 'vault/kv_1/a.b c')).toBe('vault-kv-1-a-b-c');
    expect(normalizeName('provider-c-sm', 'vault/kv_1/a.b')).toBe('vault_kv_1_a_b');
    expect(normalizeName('repohost', 'vault/kv_1/my-secret')).toBe('VAULT_KV_1_MY_SECRET');
    expect(normalizeName('hosting-project', 'db.password')).toBe('db_password');
    expect(normalizeName('provider-a-sm', 'a b/ü+=.@-')).toBe('a_b/_+=.@-');
  });

  it('any normalized name without a reported problem matches the provider regex', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...DESTINATION_TYPE_IDS),
        fc.string({ minLength: 0, maxLength: 600 }),
        (type, raw) => {
          const n = normalizeName(type, raw);
          if (nameProblem(type, n) === null) expect(n).toMatch(PROVIDER_REGEX[type]!);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reports empty, too long, leading digit and reserved prefixes', () => {
    expect(nameProblem('provider-a-sm', '')).toMatch(/empty/);
    expect(nameProblem('provider-b-kv', 'a'.repeat(128))).toMatch(/at most 127/);
    expect(nameProblem('repohost', '9LIVES')).toMatch(/digit/);
    expect(nameProblem('repohost', 'GITHUB_TOKEN')).toMatch(/GITHUB_/);
    expect(nameProblem('provider-c-sm', '9lives')).toBeNull();
  });

  it('checks value sizes against each provider limit', () => {
    expect(valueProblem('provider-b-kv', 'x'.repeat(25 * 1024))).toBeNull();
    expect(valueProblem('provider-b-kv', 'x'.repeat(25 * 1024 + 1))).toMatch(/at most 25600/);
    expect(valueProblem('provider-a-sm', 'é'.repeat(32_769))).toMatch(/65538 bytes/);
    expect(NAME_RULES.repohost.maxValueBytes).toBe(48 * 1024);
  });
});
