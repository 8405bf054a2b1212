/** JSON merge patch (RFC 7386), used by PATCH on data/ and metadata/ (Vault's framework.HandlePatchOperation). */

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Define an own property (so a "__proto__" key from JSON stays data, never a prototype change). */
function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** Apply `patch` to `target`: objects merge recursively, `null` removes a member, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = {};
  if (isObject(target)) for (const [k, v] of Object.entries(target)) setOwn(out, k, v);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else setOwn(out, k, mergePatch(Object.hasOwn(out, k) ? out[k] : undefined, v));
  }
  return out;
}

/**
 * The structure of a secret without its values (Vault's subkeys endpoint): every leaf (non-object value or
 * empty object) becomes null; objects below `depth` levels (0 = Vault's limit of 100) become null too.
 */
export function subkeysOf(data: Record<string, unknown>, depth: number): Record<string, unknown> {
  const limit = depth > 0 ? depth : 100;
  const walk = (o: Record<string, unknown>, level: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(o)) {
      setOwn(out, k, isObject(v) && Object.keys(v).length > 0 && level + 1 <= limit ? walk(v, level + 1) : null);
    }
    return out;
  };
  return walk(data, 1);
}
