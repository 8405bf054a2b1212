import { describe, expect, it } from 'vitest';
import type { Client } from '../../../src/cli/client.js';
import { candidates, parseWords, withTimeout } from '../../../src/docs/complete.js';
import { argSource, optionSource } from '../../../src/docs/dynamic.js';

/** A fake client answering from a table of "METHOD path" -> data. */
function fakeClient(answers: Record<string, unknown>): Client & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    request: async (method: string, path: string) => {
      calls.push(`${method} ${path}`);
      const data = answers[`${method} ${path}`];
      if (data === undefined) return { status: 404, headers: {}, body: { errors: [] } };
      return { status: 200, headers: {}, body: { data } };
    },
  } as unknown as Client & { calls: string[] };
}

const MOUNTS = {
  'transit/': { type: 'transit' },
  'payments/': { type: 'transit' },
  'secret/': { type: 'kv' },
  'sys/': { type: 'system' },
};

describe('__complete candidates', () => {
  it('splits words into options, positionals and the current word', () => {
    expect(parseWords(['transit', 'keys', 'read', '--mount', 'payments', '--format=json', 'ap'])).toEqual({
      options: { '--mount': 'payments', '--format': 'json' },
      positionals: ['transit', 'keys', 'read'],
      current: 'ap',
    });
    expect(parseWords([])).toEqual({ options: {}, positionals: [], current: '' });
  });

  it('lists transit keys of the default mount or of --mount', async () => {
    const c = fakeClient({ 'LIST transit/keys': { keys: ['app', 'db'] }, 'LIST payments/keys': { keys: ['card'] } });
    expect(await candidates('transit-keys', ['transit', 'encrypt', ''], c)).toEqual(['app', 'db']);
    expect(await candidates('transit-keys', ['transit', 'encrypt', '--mount', '/payments/', ''], c)).toEqual(['card']);
  });

  it('lists KV folders under the mount named by the path, or under --mount', async () => {
    const c = fakeClient({
      'GET sys/mounts': MOUNTS,
      'LIST secret/metadata/': { keys: ['app/', 'top'] },
      'LIST secret/metadata/app/': { keys: ['db'] },
    });
    expect(await candidates('kv-paths', ['kv', 'get', 'se'], c)).toEqual(['secret/']);
    expect(await candidates('kv-paths', ['kv', 'get', 'secret/'], c)).toEqual(['secret/app/', 'secret/top']);
    expect(await candidates('kv-paths', ['kv', 'get', 'secret/app/d'], c)).toEqual(['secret/app/db']);
    expect(await candidates('kv-paths', ['kv', 'get', '--mount', 'secret', 'app/'], c)).toEqual(['app/db']);
    expect(await candidates('kv-paths', ['kv', 'get', 'nothing/'], c)).toEqual([]);
  });

  it('lists mounts, by type without slashes for --mount values', async () => {
    const c = fakeClient({ 'GET sys/mounts': MOUNTS });
    expect(await candidates('mounts', ['read', ''], c)).toEqual(['payments/', 'secret/', 'transit/']);
    expect(await candidates('transit-mounts', ['transit', '--mount', ''], c)).toEqual(['payments', 'transit']);
    expect(await candidates('kv-mounts', ['kv', '--mount', ''], c)).toEqual(['secret']);
  });

  it('lists destination names, filtered by a type given earlier', async () => {
    const c = fakeClient({
      'LIST sys/sync/destinations': {
        keys: ['repohost/', 'provider-a-sm/'],
        key_info: { 'repohost/': ['gh1', 'gh2'], 'provider-a-sm/': ['aws'] },
      },
    });
    expect(await candidates('sync-destinations', ['sync', 'dest', 'read', ''], c)).toEqual(['aws', 'gh1', 'gh2']);
    expect(await candidates('sync-destinations', ['sync', 'dest', 'read', 'repohost', ''], c)).toEqual(['gh1', 'gh2']);
  });

  it('lists policies and audit devices', async () => {
    const c = fakeClient({
      'LIST sys/policies/acl': { keys: ['default', 'app'] },
      'GET sys/audit': { 'file/': {}, 'two/': {} },
    });
    expect(await candidates('policies', ['policy', 'read', ''], c)).toEqual(['default', 'app']);
    expect(await candidates('audit-devices', ['audit', 'disable', ''], c)).toEqual(['file', 'two']);
  });

  it('gives up with the fallback when the daemon is slow or fails', async () => {
    expect(await withTimeout(new Promise<string[]>(() => undefined), 20, ['x'])).toEqual(['x']);
    expect(await withTimeout(Promise.reject(new Error('down')), 1000, [])).toEqual([]);
    expect(await withTimeout(Promise.resolve(['a']), 1000, [])).toEqual(['a']);
  });

  it('routes arguments and options to sources by command', () => {
    expect(argSource(['transit', 'keys', 'read'], 'name')).toBe('transit-keys');
    expect(optionSource(['transit', 'encrypt'], '--mount')).toBe('transit-mounts');
    expect(argSource(['kv', 'get'], 'path')).toBe('kv-paths');
    expect(optionSource(['kv', 'get'], '--mount')).toBe('kv-mounts');
    expect(argSource(['sync', 'dest', 'read'], 'name')).toBe('sync-destinations');
    expect(argSource(['policy', 'read'], 'name')).toBe('policies');
    expect(optionSource(['transit', 'encrypt'], '--file')).toBe('files');
    expect(argSource(['status'], 'name')).toBeUndefined();
  });
});
