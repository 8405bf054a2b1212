/**
 * JSON as Go's encoding/json writes it, which is what Vault clients see: like JSON.stringify, with
 * `<`, `>`, `&`, U+2028 and U+2029 written as `\u003c`, `\u003e`, `\u0026`, `\u2028`, `\u2029`.
 * The response envelope (server/respond.ts) and sync's pre-serialized association maps
 * (sync/association-view.ts) both use it, so their bytes are the same.
 */

const GO_ESCAPE = /[<>&\u2028\u2029]/g;
const GO_ESCAPE_TEST = /[<>&\u2028\u2029]/;

/** `value` as JSON text with Go's escaping. */
export function goJson(value: unknown): string {
  const text = JSON.stringify(value);
  // Most values hold none of these characters; skip the regex replace then.
  if (!GO_ESCAPE_TEST.test(text)) return text;
  return text.replace(GO_ESCAPE, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}
