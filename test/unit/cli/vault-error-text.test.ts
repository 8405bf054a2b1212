/** The vault face prints errors as vault does (src/cli/vault/error-text.ts). */
import { describe, expect, it } from 'vitest';
import { LocalError, ServerError } from '../../../src/cli/errors.js';
import { vaultErrorText } from '../../../src/cli/vault/error-text.js';

const ADDR = 'http://127.0.0.1:8200/';

describe('vault face error text', () => {
  it("an API error: verb and path, vault's 'Error making API request.', URL, code and '* ' errors", () => {
    const e = new ServerError(403, ['permission denied'], null, 'GET secret/data/x');
    expect(vaultErrorText(e, ADDR).split('\n')).toEqual([
      'Error reading secret/data/x: Error making API request.',
      '',
      'URL: GET http://127.0.0.1:8200/v1/secret/data/x',
      'Code: 403. Errors:',
      '',
      '* permission denied',
    ]);
    const w = new ServerError(400, ['plaintext: must be valid base64', 'second'], null, 'POST transit/encrypt/k');
    const lines = vaultErrorText(w, ADDR).split('\n');
    expect(lines[0]).toBe('Error writing data to transit/encrypt/k: Error making API request.');
    expect(lines.slice(-2)).toEqual(['* plaintext: must be valid base64', '* second']);
  });

  it('a 404 of a read or a list is "No value found at PATH"; of a write it stays an API error', () => {
    expect(vaultErrorText(new ServerError(404, [], null, 'GET transit/keys/nope'), ADDR)).toBe(
      'No value found at transit/keys/nope',
    );
    expect(vaultErrorText(new ServerError(404, ['unsupported path'], null, 'LIST a/b'), ADDR)).toBe(
      'No value found at a/b',
    );
    expect(vaultErrorText(new ServerError(404, ['no handler'], null, 'POST a/b'), ADDR)).toMatch(
      /^Error writing data to a\/b: Error making API request\.\n\nURL: POST http:\/\/127\.0\.0\.1:8200\/v1\/a\/b\nCode: 404\./,
    );
    expect(vaultErrorText(new ServerError(404, ['No value found at secret/data/x'], null), ADDR)).toBe(
      'No value found at secret/data/x',
    );
  });

  it("keeps keyhold's one line for local errors", () => {
    expect(vaultErrorText(new LocalError('expected key=value, got "x"'), ADDR)).toBe(
      'Error: expected key=value, got "x"',
    );
  });
});
