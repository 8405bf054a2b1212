/**
 * JSON request-body limits, as Vault bounds them since its 2025 JSON-limits fix (listener options
 * `max_json_depth` 500, `max_json_string_value_length` 1 MiB, `max_json_object_entry_count` 10000,
 * `max_json_array_element_count` 10000). One linear scan of the text before JSON.parse, so a hostile
 * body is refused before any large or deep structure is built. Vault answers these with 500; a body
 * over a limit is the client's mistake, so keyhold answers 400 with Vault's message.
 */

/** The four limits. */
export interface JsonLimits {
  maxDepth: number;
  /** Longest string (key or value) or number literal, in characters of the JSON text. */
  maxStringLength: number;
  maxObjectEntries: number;
  maxArrayElements: number;
}

/** Vault's defaults (sdk/helper/jsonutil). */
export const DEFAULT_JSON_LIMITS: JsonLimits = {
  maxDepth: 500,
  maxStringLength: 1024 * 1024,
  maxObjectEntries: 10_000,
  maxArrayElements: 10_000,
};

const OPEN_OBJ = 0x7b; // {
const CLOSE_OBJ = 0x7d; // }
const OPEN_ARR = 0x5b; // [
const CLOSE_ARR = 0x5d; // ]
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Texts up to this length cannot break the default limits (each needs more characters). */
export const JSON_LIMITS_SAFE_LENGTH = Math.min(
  DEFAULT_JSON_LIMITS.maxDepth,
  DEFAULT_JSON_LIMITS.maxStringLength,
  DEFAULT_JSON_LIMITS.maxObjectEntries,
  DEFAULT_JSON_LIMITS.maxArrayElements,
);

/**
 * Returns the first limit `text` breaks (Vault's wording), or null. Syntax is left to JSON.parse:
 * the scan only counts, so malformed input can only make it stop early, never loop.
 */
export function jsonLimitViolation(text: string, limits: JsonLimits = DEFAULT_JSON_LIMITS): string | null {
  // Per open container: 1 = object, 2 = array; its element count; whether the next token starts an element.
  // A text this short cannot break any limit (each needs more characters than the smallest limit): skip the scan on the hot path.
  if (
    text.length <= Math.min(limits.maxDepth, limits.maxStringLength, limits.maxObjectEntries, limits.maxArrayElements)
  )
    return null;
  const kinds: number[] = [];
  const counts: number[] = [];
  let expectNew = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) continue;
    if (c === CLOSE_OBJ || c === CLOSE_ARR) {
      kinds.pop();
      counts.pop();
      expectNew = false;
      continue;
    }
    if (c === COMMA) {
      expectNew = kinds.length > 0;
      continue;
    }
    if (c === COLON) continue;
    if (expectNew) {
      const top = counts.length - 1;
      const count = ++counts[top]!;
      if (kinds[top] === 1 && count > limits.maxObjectEntries) return 'JSON object exceeds allowed entry count';
      if (kinds[top] === 2 && count > limits.maxArrayElements) return 'JSON array exceeds allowed element count';
      expectNew = false;
    }
    if (c === OPEN_OBJ || c === OPEN_ARR) {
      if (kinds.length >= limits.maxDepth) return 'JSON input exceeds allowed nesting depth';
      kinds.push(c === OPEN_OBJ ? 1 : 2);
      counts.push(0);
      expectNew = true;
      continue;
    }
    if (c === QUOTE) {
      let j = i + 1;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d === BACKSLASH) j += 2;
        else if (d === QUOTE) break;
        else j++;
      }
      if (j - i - 1 > limits.maxStringLength) return 'JSON string value exceeds allowed length';
      i = j;
      continue;
    }
    // Number or literal: runs to the next structural character or space.
    let j = i;
    while (j < n) {
      const d = text.charCodeAt(j);
      if (isSpace(d) || d === COMMA || d === CLOSE_OBJ || d === CLOSE_ARR || d === COLON) break;
      j++;
    }
    if (j - i > limits.maxStringLength) return 'JSON number value exceeds allowed length';
    i = j - 1;
  }
  return null;
}
