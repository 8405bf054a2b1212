import { describe, expect, it } from 'vitest';
import { checkTemplate, renderClaims, templateText } from '../../../src/auth/oidc/claims-template.js';

const who = {
  id: 'e-1',
  name: 'alice',
  metadata: { team: 'pay"ments' },
  groupIds: ['g-1'],
  groupNames: ['eng'],
  aliases: [{ id: 'a-1', name: 'alice@gh', mountAccessor: 'auth_jwt_12', metadata: { repository: 'org/repo' } }],
};

describe('identity token claims templates', () => {
  it('fills placeholders with JSON values (strings escaped, maps and lists as JSON)', () => {
    const t =
      '{"n": {{identity.entity.name}}, "team": {{identity.entity.metadata.team}}, "all": {{identity.entity.metadata}}, "g": {{identity.entity.groups.names}}, "ids": {{ identity.entity.groups.ids }}, "repo": {{identity.entity.aliases.auth_jwt_12.metadata.repository}}, "alias": {{identity.entity.aliases.auth_jwt_12.name}}, "missing": {{identity.entity.metadata.nope}}, "t": {{time.now.plus.1h}}}';
    expect(renderClaims(t, who, 1000)).toEqual({
      n: 'alice',
      team: 'pay"ments',
      all: { team: 'pay"ments' },
      g: ['eng'],
      ids: ['g-1'],
      repo: 'org/repo',
      alias: 'alice@gh',
      missing: '',
      t: 4600,
    });
  });

  it('accepts a base64-encoded template', () => {
    const raw = '{"x": {{identity.entity.id}}}';
    expect(templateText(Buffer.from(raw).toString('base64'))).toBe(raw);
    expect(renderClaims(Buffer.from(raw).toString('base64'), who, 0)).toEqual({ x: 'e-1' });
  });

  it('refuses reserved claims, non-objects, bad JSON and unknown placeholders, naming the template', () => {
    for (const bad of ['{"sub": "x"}', '{"aud": 1}', '[1]', '{"a": }', '{"a": {{identity.entity.shoe_size}}}']) {
      expect(() => checkTemplate(bad)).toThrow(/^template: /);
    }
  });
});
