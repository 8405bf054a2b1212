/** Where the daemon is and which token to send: flags, then environment, then defaults. */
import { readFileSync } from 'node:fs';
import { defaultSocket, tokenFile } from '../framework/paths.js';

/** Connection settings. */
export interface ClientOptions {
  address?: string;
  token?: string;
  env?: NodeJS.ProcessEnv;
  /** Ask for response wrapping (X-Vault-Wrap-TTL) on every request; env VAULT_WRAP_TTL. */
  wrapTtl?: string;
}

/** Resolve the daemon address from flag, env or default; a bare absolute path means a Unix socket. */
export function resolveAddress(opts: ClientOptions): string {
  const env = opts.env ?? process.env;
  const a = opts.address || env.KEYHOLD_ADDR || env.VAULT_ADDR || `unix://${defaultSocket(env)}`;
  return a.startsWith('/') ? `unix://${a}` : a;
}

/** Resolve the token from flag, env or the login file. */
export function resolveToken(opts: ClientOptions): string | undefined {
  const env = opts.env ?? process.env;
  const t = opts.token || env.KEYHOLD_TOKEN || env.VAULT_TOKEN;
  if (t) return t.trim();
  try {
    return readFileSync(tokenFile(env), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** A Go-style true value of an environment variable. */
export function isTrue(v: string | undefined): boolean {
  return v !== undefined && ['1', 't', 'true', 'TRUE', 'True'].includes(v);
}
