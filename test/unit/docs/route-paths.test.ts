import { describe, expect, it } from 'vitest';
import { humanPath, pathVariants } from '../../../src/docs/route-paths.js';

describe('route path variants', () => {
  it('turns :name and *path into {name} and {path}', () => {
    expect(pathVariants('keys/:name')).toEqual([{ path: 'keys/{name}', params: ['name'] }]);
    expect(pathVariants('mounts/*path/tune')).toEqual([{ path: 'mounts/{path}/tune', params: ['path'] }]);
  });

  it('expands optional literal parts', () => {
    expect(pathVariants('create(-orphan)').map((v) => v.path)).toEqual(['create', 'create-orphan']);
  });

  it('keeps the earlier parameter when optional parts give the same shape', () => {
    expect(
      pathVariants('random(/:source)(/:bytes)')
        .map((v) => v.path)
        .sort(),
    ).toEqual(['random', 'random/{source}', 'random/{source}/{bytes}']);
    expect(pathVariants('hash(/:algorithm)').map((v) => v.path)).toEqual(['hash', 'hash/{algorithm}']);
  });

  it('writes templates for people', () => {
    expect(humanPath('random(/:source)(/:bytes)')).toBe('random[/SOURCE][/BYTES]');
    expect(humanPath('data/*path')).toBe('data/PATH');
  });
});
