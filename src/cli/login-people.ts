/**
 * `keyhold login -method=userpass|github|cert` and the login MFA step, in the vault CLI's forms
 * (hashicorp/vault builtin/credential/userpass/cli.go, github/cli.go, cert/cli.go, command/login.go
 * for mfa_requirement). Secrets never come from argv: a password or token is typed at a prompt
 * without echo, or given as `password=-` (stdin) or `password=@file`. The command shape that calls
 * this (src/cli/commands) only hands it the pairs and a way to send requests and ask for secrets.
 */
import type { ApiResponse } from './client.js';
import { LocalError } from './errors.js';

/** What a method login needs from the command around it. */
export interface LoginIo {
  request(
    method: string,
    path: string,
    body?: unknown,
    opts?: { headers?: Record<string, string> },
  ): Promise<ApiResponse>;
  /** A secret typed without echo after `prompt` on a terminal, else all of piped stdin. */
  secret(prompt: string): Promise<string>;
  /** `k=v`, `k=@file`, `k=-` pairs to an object. */
  parsePairs(pairs: string[]): Promise<Record<string, unknown>>;
  /** Environment (VAULT_AUTH_GITHUB_TOKEN). */
  env: NodeJS.ProcessEnv;
  /** Where prompts and notes go. */
  stderr: { write(s: string): unknown };
}

/** Methods this module logs in with. */
export const PEOPLE_METHODS: readonly string[] = ['userpass', 'github', 'cert'];

/** Refuse `key=<literal secret>` on the command line: it would sit in the shell history and `ps`. */
function noSecretInArgv(args: string[], key: string): void {
  for (const a of args) {
    if (!a.startsWith(`${key}=`)) continue;
    const v = a.slice(key.length + 1);
    if (v !== '-' && !v.startsWith('@'))
      throw new LocalError(
        `${key} must not be given on the command line: leave it out to be prompted, or use ${key}=- (stdin) or ${key}=@FILE`,
      );
  }
}

/** Log in with userpass, github or cert at `mount`; the auth block, after MFA when the server asks for it. */
export async function peopleLogin(
  method: string,
  mount: string,
  args: string[],
  io: LoginIo,
): Promise<Record<string, unknown>> {
  let path: string;
  let body: Record<string, unknown>;
  if (method === 'userpass') {
    noSecretInArgv(args, 'password');
    const pairs = await io.parsePairs(args);
    const username = String(pairs.username ?? '').trim();
    if (!username) throw new LocalError('username=... is required');
    let password =
      pairs.password === undefined
        ? await io.secret('Password (will be hidden): ')
        : String(pairs.password).replace(/\r?\n$/, '');
    if (!password) throw new LocalError('no password given');
    path = `auth/${mount}/login/${encodeURIComponent(username)}`;
    body = { password };
    password = '';
  } else if (method === 'github') {
    noSecretInArgv(args, 'token');
    const pairs = await io.parsePairs(args);
    const token =
      pairs.token !== undefined
        ? String(pairs.token).trim()
        : io.env.VAULT_AUTH_GITHUB_TOKEN || (await io.secret('GitHub Personal Access Token (will be hidden): '));
    if (!token) throw new LocalError('no GitHub token given');
    path = `auth/${mount}/login`;
    body = { token };
  } else if (method === 'cert') {
    const pairs = await io.parsePairs(args);
    path = `auth/${mount}/login`;
    body = pairs.name !== undefined ? { name: String(pairs.name) } : {};
  } else throw new LocalError(`unknown auth method "${method}"`);
  const r = await io.request('POST', path, body);
  const auth = r.body?.auth as Record<string, unknown> | undefined;
  if (!auth) throw new LocalError('the server returned no auth block');
  return completeMfa(auth, io);
}

/**
 * A login answered with `mfa_requirement` (no token yet): ask for each method's passcode as the
 * vault CLI does and send them to sys/mfa/validate; the answer there holds the token.
 */
export async function completeMfa(
  auth: Record<string, unknown>,
  io: Pick<LoginIo, 'request' | 'secret' | 'stderr'>,
): Promise<Record<string, unknown>> {
  const req = auth.mfa_requirement as
    | {
        mfa_request_id?: string;
        mfa_constraints?: Record<string, { any?: Array<{ id: string; type: string; uses_passcode?: boolean }> }>;
      }
    | null
    | undefined;
  if (auth.client_token || !req?.mfa_request_id) return auth;
  const payload: Record<string, string[]> = {};
  for (const [name, c] of Object.entries(req.mfa_constraints ?? {})) {
    const m = c.any?.[0];
    if (!m) continue;
    const code = (
      await io.secret(`Enter the passphrase for methodID "${m.id}" of type "${m.type}" (${name}): `)
    ).trim();
    if (!code) throw new LocalError('no MFA passcode given');
    payload[m.id] = [code];
  }
  const r = await io.request('POST', 'sys/mfa/validate', { mfa_request_id: req.mfa_request_id, mfa_payload: payload });
  const done = r.body?.auth as Record<string, unknown> | undefined;
  if (!done?.client_token) throw new LocalError('the server returned no token after MFA');
  return done;
}
