/**
 * External name rules and value limits per destination type (reference sync-wire.md 3.1-3.6).
 * Rendered names are normalized into the provider's character set (Vault does this rather than
 * failing, reference 1.6), then checked; a name that still breaks a rule is refused before anything
 * is sent.
 */
import type { DestinationType } from './types.js';

/** The rules of one provider. */
export interface NameRule {
  /** Characters allowed (a single-character class). */
  allowed: RegExp;
  /** Replacement for a disallowed character. */
  replacement: string;
  maxLength: number;
  /** Names are stored upper-case (GitHub). */
  upperCase?: boolean;
  /** A leading digit is refused (GitHub, Vercel). */
  noLeadingDigit?: boolean;
  /** Refused prefixes, case-insensitive. */
  reservedPrefixes?: string[];
  /** Largest value in bytes. */
  maxValueBytes: number;
  /** Where the facts come from. */
  source: string;
}

/** The table (reference 3.6 name-rule summary and each provider's limits). */
export const NAME_RULES: Record<DestinationType, NameRule> = {
  'provider-a-sm': {
    allowed: /[A-Za-z0-9/_+=.@-]/,
    replacement: '_',
    maxLength: 512,
    maxValueBytes: 65_536,
    source: 'AWS CreateSecret Name; value limit 65,536 bytes',
  },
  'provider-b-kv': {
    allowed: /[0-9A-Za-z-]/,
    replacement: '-',
    maxLength: 127,
    maxValueBytes: 25 * 1024,
    source: 'Azure Key Vault about-secrets: ^[0-9a-zA-Z-]+$, 1-127, 25 KB',
  },
  'provider-c-sm': {
    allowed: /[A-Za-z0-9_-]/,
    replacement: '_',
    maxLength: 255,
    maxValueBytes: 64 * 1024,
    source: 'Secret Manager secret id ^[A-Za-z0-9_-]{1,255}$, payload 64 KiB',
  },
  repohost: {
    allowed: /[A-Za-z0-9_]/,
    replacement: '_',
    maxLength: 255,
    upperCase: true,
    noLeadingDigit: true,
    reservedPrefixes: ['GITHUB_'],
    maxValueBytes: 48 * 1024,
    source: 'GitHub secrets reference: [A-Za-z0-9_], no leading digit, no GITHUB_ prefix, 48 KB',
  },
  'hosting-project': {
    allowed: /[A-Za-z0-9_]/,
    replacement: '_',
    maxLength: 255,
    noLeadingDigit: true,
    maxValueBytes: 64 * 1024,
    source: 'Vercel env var keys ^[A-Za-z_][A-Za-z0-9_]*$, 64 KB',
  },
  gitlab: {
    allowed: /[A-Za-z0-9_]/,
    replacement: '_',
    maxLength: 255,
    maxValueBytes: 10_000,
    source: 'GitLab CI/CD variable keys [A-Za-z0-9_], at most 255 characters; values at most 10,000 characters',
  },
};

/** Normalize a rendered name into the type's character set. */
export function normalizeName(type: DestinationType, rendered: string): string {
  const rule = NAME_RULES[type];
  let out = '';
  for (const ch of rendered) out += rule.allowed.test(ch) ? ch : rule.replacement;
  return rule.upperCase ? out.toUpperCase() : out;
}

/** Why a normalized name is unusable, or null when it is fine. */
export function nameProblem(type: DestinationType, name: string): string | null {
  const rule = NAME_RULES[type];
  if (name.length === 0) return 'the rendered secret name is empty';
  if (name.length > rule.maxLength)
    return `the rendered secret name is ${name.length} characters; ${type} allows at most ${rule.maxLength}`;
  if (rule.noLeadingDigit && /^[0-9]/.test(name))
    return `the rendered secret name "${name.slice(0, 64)}" starts with a digit, which ${type} does not allow`;
  for (const p of rule.reservedPrefixes ?? []) {
    if (name.toUpperCase().startsWith(p))
      return `the rendered secret name "${name.slice(0, 64)}" starts with the reserved prefix ${p}`;
  }
  return null;
}

/** Why a value is too large, or null. */
export function valueProblem(type: DestinationType, value: string): string | null {
  const size = Buffer.byteLength(value, 'utf8');
  const max = NAME_RULES[type].maxValueBytes;
  return size > max ? `the value is ${size} bytes; ${type} accepts at most ${max}` : null;
}
