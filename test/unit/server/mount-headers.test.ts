/** What an engine sees of the request headers and may set in its answer, per its mount's tune. */
import { describe, expect, it } from 'vitest';
import type { MountInfo } from '../../../src/framework/context.js';
import { allowedResponseHeaders, engineRequestHeaders } from '../../../src/server/mount-headers.js';

const mount = (path: string, config: Record<string, unknown> = {}): MountInfo => ({
  path,
  type: 'transit',
  accessor: 'a',
  uuid: 'u',
  description: '',
  options: null,
  config,
  local: false,
  seal_wrap: false,
  external_entropy_access: false,
});
const headers = { 'x-vault-token': 'secret-token', 'x-custom': 'v', 'user-agent': 'ua' };

describe('engineRequestHeaders', () => {
  it('gives an engine no headers unless its mount passes some through, and never the token', () => {
    expect(engineRequestHeaders(mount('transit/'), headers)).toEqual({});
    expect(engineRequestHeaders(mount('transit/', { passthrough_request_headers: ['X-Custom'] }), headers)).toEqual({
      'x-custom': 'v',
    });
  });
  it('gives the system backend every header', () => {
    expect(engineRequestHeaders(mount('sys/'), headers)).toBe(headers);
  });
});

describe('allowedResponseHeaders', () => {
  it('lets only the headers the mount allows reach the client', () => {
    expect(allowedResponseHeaders(mount('transit/'), { 'X-Engine': '1' })).toBeNull();
    expect(
      allowedResponseHeaders(mount('transit/', { allowed_response_headers: ['x-engine'] }), {
        'X-Engine': '1',
        'X-Other': '2',
      }),
    ).toEqual({ 'X-Engine': '1' });
  });
});
