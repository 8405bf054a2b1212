/**
 * The vault face's environment: the vault CLI's variables win over keyhold's (VAULT_ADDR over
 * KEYHOLD_ADDR, ...). Applied once, at start, by copying each VAULT_* value set onto its KEYHOLD_* twin,
 * which is what keyhold's settings read first.
 */

/** VAULT_* variable -> the KEYHOLD_* one keyhold reads. */
export const VAULT_ENV: Readonly<Record<string, string>> = {
  VAULT_ADDR: 'KEYHOLD_ADDR',
  VAULT_TOKEN: 'KEYHOLD_TOKEN',
  VAULT_CACERT: 'KEYHOLD_CACERT',
  VAULT_CLIENT_CERT: 'KEYHOLD_CLIENT_CERT',
  VAULT_CLIENT_KEY: 'KEYHOLD_CLIENT_KEY',
  VAULT_SKIP_VERIFY: 'KEYHOLD_SKIP_VERIFY',
  VAULT_TLS_SERVER_NAME: 'KEYHOLD_TLS_SERVER_NAME',
};

/** Let the VAULT_* variables of `env` win over their KEYHOLD_* twins (in place). */
export function applyVaultEnv(env: NodeJS.ProcessEnv = process.env): void {
  for (const [vault, keyhold] of Object.entries(VAULT_ENV)) {
    const v = env[vault];
    if (v !== undefined && v !== '') env[keyhold] = v;
  }
}
