import { describe, expect, it } from 'vitest';
import { compilePath, matchRoute, routesFor } from '../../../src/framework/route.js';
import { f } from '../../../src/framework/fields.js';
import { KeyholdError, conflict, denied, invalid, notFound } from '../../../src/framework/errors.js';

const route = routesFor<unknown>();

describe('path templates', () => {
  it('matches one segment for :name and rejects a slash in it', () => {
    const { matcher, params } = compilePath('keys/:name');
    expect(params).toEqual(['name']);
    expect(matcher.exec('keys/my-key')?.[1]).toBe('my-key');
    expect(matcher.test('keys/a/b')).toBe(false);
    expect(matcher.test('keys/')).toBe(false);
  });

  it('supports optional groups and rest parameters (captures in params order)', () => {
    const r = compilePath('random(/:source)(/:bytes)');
    expect(r.params).toEqual(['source', 'bytes']);
    expect(r.matcher.exec('random')?.slice(1)).toEqual([undefined, undefined]);
    expect(r.matcher.exec('random/all/64')?.slice(1)).toEqual(['all', '64']);
    expect(compilePath('data/*path').matcher.exec('data/a/b/c')?.[1]).toBe('a/b/c');
    const routes = [route({ path: 'random(/:source)(/:bytes)', summary: '', fields: {}, operations: {} })];
    expect(matchRoute(routes, 'random/64')?.params).toEqual({ source: '64' });
    expect(matchRoute(routes, 'random/all/64')?.params).toEqual({ source: 'all', bytes: '64' });
    expect(matchRoute(routes, 'random')?.params).toEqual({});
  });

  it('escapes regex metacharacters in literal parts', () => {
    const { matcher } = compilePath('a.b+c');
    expect(matcher.test('a.b+c')).toBe(true);
    expect(matcher.test('aXbbc')).toBe(false);
  });

  it('returns the first matching route and does not decode parameters a second time', () => {
    const routes = [
      route({ path: 'keys/:name/rotate', summary: '', fields: { name: f.name('n') }, operations: {} }),
      route({ path: 'keys/:name', summary: '', fields: { name: f.name('n') }, operations: {} }),
    ];
    expect(matchRoute(routes, 'keys/k/rotate')?.route).toBe(routes[0]);
    expect(matchRoute(routes, 'keys/k')?.route).toBe(routes[1]);
    // The router decodes the URL once; a literal "%" must survive (and must not throw URIError).
    expect(matchRoute(routes, 'keys/50%off')?.params).toEqual({ name: '50%off' });
    expect(matchRoute(routes, 'nope')).toBeNull();
  });
});

describe('error kinds', () => {
  it('maps kinds to statuses and formats "field: rule"', () => {
    expect(invalid('nonce', 'must be exactly 12 bytes, got 8').message).toBe('nonce: must be exactly 12 bytes, got 8');
    expect(invalid('nonce', 'x').status).toBe(400);
    expect(denied().status).toBe(403);
    expect(notFound().status).toBe(404);
    expect(notFound().message).toBe('');
    expect(conflict('in use').status).toBe(409);
    expect(conflict('in use', 400).status).toBe(400);
    expect(new KeyholdError('tooLarge', 'x').status).toBe(413);
    expect(new KeyholdError('sealed', 'x').status).toBe(503);
  });
});

describe('route index (first literal segment)', () => {
  it('matches exactly as a linear scan in table order would, for literal, optional and variable templates', async () => {
    const { routesFor, matchRoute } = await import('../../../src/framework/route.js');
    const { f } = await import('../../../src/framework/fields.js');
    const def = routesFor<unknown>();
    const mk = (path: string) =>
      def({ path, summary: path, fields: { x: f.string('x') }, operations: { read: () => undefined } });
    const table = [
      mk('keys/:name'),
      mk('keys'),
      mk('create(-orphan)'),
      mk('random(/:source)(/:bytes)'),
      mk('data/*path'),
      mk(':catch/all'),
      mk('(*rest)'),
    ];
    const linear = (p: string) => table.find((r) => r.matcher.test(p)) ?? null;
    for (const p of [
      'keys/a',
      'keys',
      'create',
      'create-orphan',
      'random',
      'random/hex/32',
      'data/a/b/c',
      'zzz/all',
      'keys/all',
      'other/thing',
      'x',
    ]) {
      expect(matchRoute(table, p)?.route ?? null, p).toBe(linear(p));
    }
    expect(matchRoute(table, 'create-orphan')?.route.path).toBe('create(-orphan)');
    expect(matchRoute(table, 'zzz/all')?.route.path).toBe(':catch/all');
    expect(matchRoute(table, 'keys/all')?.route.path).toBe('keys/:name');
  });
});
