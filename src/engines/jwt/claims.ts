/**
 * Claim rules of JWT roles (vault-plugin-auth-jwt claims.go): claims by name or JSON pointer, bound
 * claims in string or glob mode, claim mappings into metadata, the groups claim.
 */
import { invalid } from '../../framework/errors.js';

/** A claim by plain name, or by JSON pointer (`/a/b`) when `pointer` or the name starts with "/". */
export function getClaim(claims: Record<string, unknown>, name: string, pointer = false): unknown {
  if (!pointer && !name.startsWith('/')) return Object.hasOwn(claims, name) ? claims[name] : undefined;
  let cur: unknown = claims;
  for (const raw of name.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur && typeof cur === 'object' && Object.hasOwn(cur as object, seg))
      cur = (cur as Record<string, unknown>)[seg];
    else return undefined;
  }
  return cur;
}

/** `*` matches any run of characters, `/` and `:` included (Vault's glob bound claims). */
export function globMatch(pattern: string, value: string): boolean {
  const re = new RegExp(
    '^' +
      pattern
        .split('*')
        .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*') +
      '$',
    's',
  );
  return re.test(value);
}

function scalarEqual(expected: unknown, actual: unknown): boolean {
  if (typeof expected === 'number' && typeof actual === 'number') return expected === actual;
  return expected === actual;
}

/** Check `bound_claims`; throws Vault's `error validating claims: ...` (400). */
export function checkBoundClaims(claims: Record<string, unknown>, bound: Record<string, unknown>, glob: boolean): void {
  for (const [name, expectedRaw] of Object.entries(bound)) {
    const actual = getClaim(claims, name);
    if (actual === undefined) throw invalid(`error validating claims: claim ${JSON.stringify(name)} is missing`);
    const expected = Array.isArray(expectedRaw) ? expectedRaw : [expectedRaw];
    const actuals = Array.isArray(actual) ? actual : [actual];
    const ok = actuals.some((a) =>
      expected.some((e) => {
        if (glob) return typeof e === 'string' && typeof a === 'string' && globMatch(e, a);
        return scalarEqual(e, a);
      }),
    );
    if (!ok)
      throw invalid(
        `error validating claims: claim ${JSON.stringify(name)} does not match any associated bound claim values`,
      );
  }
}

/** Metadata from `claim_mappings` (values must be strings, numbers or booleans). */
export function mapClaims(claims: Record<string, unknown>, mappings: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [claim, key] of Object.entries(mappings)) {
    const v = getClaim(claims, claim);
    if (v === undefined) continue;
    if (typeof v === 'string') out[key] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') out[key] = String(v);
    else throw invalid(`error converting claim '${claim}' to string`);
  }
  return out;
}

/** Group names from `groups_claim` (a list of strings, or one string). */
export function groupsOf(claims: Record<string, unknown>, groupsClaim: string): string[] {
  const v = getClaim(claims, groupsClaim);
  if (v === undefined) throw invalid(`${JSON.stringify(groupsClaim)} claim not found in token`);
  const list = Array.isArray(v) ? v : [v];
  const out: string[] = [];
  for (const g of list) {
    if (typeof g !== 'string')
      throw invalid(`unable to convert ${JSON.stringify(groupsClaim)} claim values to strings`);
    out.push(g);
  }
  return out;
}
