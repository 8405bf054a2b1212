/**
 * `reported_vault_version` (issue 31 part 1): the Vault version sys/seal-status and sys/health
 * report as `version`, so tools that gate features on the server's version (terraform-provider-vault
 * reads seal-status and refuses its `vault_secrets_sync_*` resources below 1.16) work against
 * keyhold. keyhold's own version stays in those answers as `keyhold_version`.
 */

/** A semantic version as tools parse it (hashicorp/go-version's NewSemver): 1.16.0, 1.19.0+ent, 2.0.0-rc1. */
const SEMVER = /^v?\d{1,4}\.\d{1,4}\.\d{1,4}(-[0-9A-Za-z.-]{1,40})?(\+[0-9A-Za-z.-]{1,40})?$/;

/** Why `v` is not a usable reported version, or null when it is. */
export function reportedVersionProblem(v: unknown): string | null {
  if (typeof v !== 'string' || !SEMVER.test(v))
    return 'must be a semantic version such as "1.19.0" or "2.2.0+ent" (clients parse it as one)';
  return null;
}

/** The version fields of seal-status and health: `version` (the reported one when set) and keyhold's own. */
export function versionFields(own: string, reported: string | undefined): Record<string, string> {
  return reported ? { version: reported.replace(/^v/, ''), keyhold_version: own } : { version: own };
}
