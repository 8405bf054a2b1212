/** goJson: JSON as Go's encoding/json writes it (what Vault clients see). */
import { describe, expect, it } from 'vitest';
import { goJson } from '../../../src/framework/go-json.js';

describe('goJson', () => {
  it('escapes <, >, &, U+2028 and U+2029 as Go does', () => {
    expect(goJson({ k: 'a<b>&c\u2028d\u2029' })).toBe('{"k":"a\\u003cb\\u003e\\u0026c\\u2028d\\u2029"}');
  });

  it('escapes in keys too, and reads back as the same value', () => {
    const v = { '<tag>': ['&', '\u2028', 1, null, true], plain: 'é ✓' };
    const text = goJson(v);
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(v);
  });

  it('is JSON.stringify when there is nothing to escape', () => {
    const v = { a: 'plain text', b: [1, 2.5, -3], c: { d: null } };
    expect(goJson(v)).toBe(JSON.stringify(v));
  });
});
