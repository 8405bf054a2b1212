import { describe, expect, it } from 'vitest';
import { NameTemplate, TemplateError } from '../../../src/sync/templates.js';
import { checkTemplate } from '../../../src/sync/destination-service.js';
import { DESTINATION_TYPES } from '../../../src/sync/destinations/index.js';
import { normalizeName } from '../../../src/sync/name-rules.js';
import { DESTINATION_TYPE_IDS } from '../../../src/sync/types.js';

const vars = {
  MountAccessor: 'kv_1234',
  SecretPath: 'my-secret',
  SecretKey: 'dev',
  MountPath: 'secret',
  SecretBaseName: 'my-secret',
};

describe('secret name templates', () => {
  it('renders the reference examples after normalization', () => {
    const aws = DESTINATION_TYPES['provider-a-sm'].defaultTemplates['secret-path'];
    expect(normalizeName('provider-a-sm', NameTemplate.parse(aws).render(vars))).toBe('vault/kv_1234/my-secret');
    const az = DESTINATION_TYPES['provider-b-kv'].defaultTemplates['secret-path'];
    expect(normalizeName('provider-b-kv', NameTemplate.parse(az).render(vars))).toBe('vault-kv-1234-my-secret');
    const gh = DESTINATION_TYPES.repohost.defaultTemplates['secret-path'];
    expect(normalizeName('repohost', NameTemplate.parse(gh).render(vars))).toBe('VAULT_KV_1234_MY_SECRET');
  });

  it('pipes the value as the last argument of replace, like Go templates', () => {
    expect(NameTemplate.parse('{{ .SecretPath | replace "/" "_" }}').render({ SecretPath: 'path/to/secret1' })).toBe(
      'path_to_secret1',
    );
    expect(NameTemplate.parse('{{ replace "/" "_" .SecretPath }}').render({ SecretPath: 'a/b' })).toBe('a_b');
    expect(NameTemplate.parse('x-{{ .SecretKey | uppercase | lowercase }}-y').render({ SecretKey: 'AbC' })).toBe(
      'x-abc-y',
    );
  });

  it('records which fields a template uses', () => {
    expect([...NameTemplate.parse('{{ .SecretPath }}/{{.SecretKey}}').fields].sort()).toEqual([
      'SecretKey',
      'SecretPath',
    ]);
  });

  it.each([
    ['{{.InvalidTemplate}}', /unknown field/],
    ['{{ .SecretPath | shout }}', /not defined/],
    ['{{ .SecretPath', /unclosed/],
    ['{{ }}', /empty action/],
    ['{{ .SecretPath | replace "a" }}', /wrong number of arguments/],
    ['{{ .SecretPath .SecretKey }}', /unexpected/],
    ['{{ "abc }}', /unterminated/],
  ])('rejects %s', (src, re) => {
    expect(() => NameTemplate.parse(src)).toThrow(TemplateError);
    expect(() => NameTemplate.parse(src)).toThrow(re);
  });

  it('every default template is valid for its type and granularity', () => {
    for (const t of DESTINATION_TYPE_IDS) {
      for (const g of ['secret-path', 'secret-key'] as const)
        expect(() => checkTemplate(t, DESTINATION_TYPES[t].defaultTemplates[g], g)).not.toThrow();
    }
  });

  it("refuses a secret-key template that does not mention the key, with Vault's wording", () => {
    expect(() => checkTemplate('provider-a-sm', 'vault/{{ .SecretPath }}', 'secret-key')).toThrow(
      'secret name template is invalid: external name template should contain reference to the secret key',
    );
  });

  it('refuses templates that can never give a valid name for the provider', () => {
    expect(() => checkTemplate('repohost', 'GITHUB_{{ .SecretKey }}', 'secret-key')).toThrow(/reserved prefix GITHUB_/);
    expect(() => checkTemplate('hosting-project', '1{{ .SecretKey }}', 'secret-key')).toThrow(/starts with a digit/);
    expect(() => checkTemplate('provider-b-kv', 'x'.repeat(200), 'secret-path')).toThrow(/at most 127/);
  });
});
