/** Where `keyhold login` keeps the token, and the rows it prints for an auth block. */
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { tokenFile } from '../../../framework/paths.js';

/** Save a token where later commands find it (0600, written atomically). */
export function saveToken(token: string): string {
  const file = tokenFile();
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // Write to a private temp file and rename, so the token is never readable by others even briefly.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, token + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return file;
}

/** The rows `vault login` prints for an auth block. */
export function authRows(a: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    token: a.client_token,
    token_accessor: a.accessor,
    token_duration: a.lease_duration,
    token_renewable: a.renewable,
    token_policies: a.token_policies ?? a.policies,
    identity_policies: a.identity_policies ?? [],
    policies: a.policies,
  };
  for (const [k, v] of Object.entries((a.metadata ?? {}) as Record<string, unknown>)) out[`token_meta_${k}`] = v;
  return out;
}
