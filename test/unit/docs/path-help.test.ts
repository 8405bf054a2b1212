import { describe, expect, it } from 'vitest';
import { DEV_MOUNTS, mountedRoutes, resolveMount } from '../../../src/docs/catalog.js';
import { findPath, pathHelp, renderPathHelp } from '../../../src/docs/path-help.js';
import { renderTopic, TOPICS } from '../../../src/cli/help-topics.js';

const mounts = mountedRoutes([...DEV_MOUNTS, { path: 'payments/', type: 'transit' }, { path: 'team/', type: 'kv-v2' }]);

describe('path-help', () => {
  it('resolves the longest mount first (sys/sync/ before sys/)', () => {
    expect(resolveMount(mounts, 'sys/sync/destinations')?.path).toBe('sys/sync/');
    expect(resolveMount(mounts, 'sys/mounts')?.path).toBe('sys/');
    expect(resolveMount(mounts, '/v1/payments/keys/x')?.path).toBe('payments/');
    expect(resolveMount(mounts, 'nowhere/x')).toBeUndefined();
  });

  it('finds the route of a user mount and describes its fields', () => {
    const hit = findPath(mounts, 'payments/keys/card');
    expect(hit?.route.path).toBe('keys/:name');
    const h = pathHelp('payments/keys/card', hit!.mount, hit!.route);
    expect(h.mount).toEqual({ path: 'payments/', type: 'transit' });
    expect(h.fields.name).toMatchObject({ in_path: true });
    expect(h.operations).toEqual(expect.arrayContaining(['GET (read)', 'DELETE (delete)']));
    const text = renderPathHelp(h);
    expect(text).toMatch(/^Request: {8}payments\/keys\/card$/m);
    expect(text).toMatch(/^Matching Route: keys\/NAME$/m);
    expect(text).toContain('## PARAMETERS');
    expect(text).toMatch(/^ {4}name \(string; in the path/m);
  });

  it('describes sys routes with their access rules', () => {
    const hit = findPath(mounts, 'sys/health');
    const h = pathHelp('sys/health', hit!.mount, hit!.route);
    expect(h.unauthenticated).toBe(true);
    expect(h.fields.sealedcode).toMatchObject({ type: 'int', default: 503 });
    expect(renderPathHelp(h)).toContain('Access:         no token needed');
    expect(findPath(mounts, 'sys/internal/specs/openapi')?.route.summary).toMatch(/OpenAPI/);
  });

  it('returns null for paths no route serves', () => {
    expect(findPath(mounts, 'transit/no-such-thing/at/all')).toBeNull();
    expect(findPath(mounts, 'unmounted/x')).toBeNull();
  });
});

describe('help topics', () => {
  it('has exit-codes, environment and formats', () => {
    expect(TOPICS.map((t) => t.name)).toEqual(['exit-codes', 'environment', 'formats']);
  });
  it('renders the exit codes 0, 1, 2 and the environment variables the client reads', () => {
    const exit = renderTopic(TOPICS[0]!);
    for (const c of ['0', '1', '2']) expect(exit).toMatch(new RegExp(`^  ${c} +\\S`, 'm'));
    const env = renderTopic(TOPICS[1]!);
    for (const v of ['KEYHOLD_ADDR', 'VAULT_ADDR', 'KEYHOLD_TOKEN', 'VAULT_TOKEN', 'NO_COLOR', 'KEYHOLD_HOME'])
      expect(env).toContain(v);
  });
});
