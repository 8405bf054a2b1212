/**
 * `keyhold login`: a token (stdin or argument), or -method=approle|jwt|oidc|userpass|github|cert with
 * k=v pairs, in the vault CLI's forms (hashicorp/vault command/login.go); the token is saved for later
 * commands. The people methods and the MFA step are in src/cli/login-people.ts.
 */
import { flag, optArg, type CommandSpec, type Invocation } from '../../command.js';
import { LocalError } from '../../errors.js';
import { grid } from '../../output.js';
import { PEOPLE_METHODS, completeMfa, peopleLogin } from '../../login-people.js';
import { oidcLogin } from './oidc.js';
import { authRows, saveToken } from './token-file.js';

/** Log in with a method other than token; returns the auth block. */
async function methodLogin(inv: Invocation, method: string, args: string[]): Promise<Record<string, unknown>> {
  const client = inv.client;
  const peopleMount = (inv.opts.path ?? method).replace(/^\/+|\/+$/g, '');
  if (PEOPLE_METHODS.includes(method)) {
    client.token = undefined;
    const auth = await peopleLogin(method, peopleMount, args, {
      request: client.request.bind(client),
      secret: inv.secret,
      parsePairs: inv.parsePairs,
      env: process.env,
      stderr: inv.io.stderr,
    });
    if (!auth.client_token) throw new LocalError('the server returned no token');
    return auth;
  }
  const pairs = await inv.parsePairs(args);
  const mount = (inv.opts.path ?? method).replace(/^\/+|\/+$/g, '');
  // Login paths need no token; a stale saved one must not be sent along.
  client.token = undefined;
  let auth: Record<string, unknown> | undefined;
  if (method === 'approle') {
    const r = await client.request('POST', `auth/${mount}/login`, {
      role_id: String(pairs.role_id ?? '').trim(),
      secret_id: String(pairs.secret_id ?? '').trim(),
    });
    auth = r.body?.auth as Record<string, unknown>;
  } else if (method === 'jwt') {
    if (pairs.jwt === undefined)
      throw new LocalError('jwt=... is required: give the token as jwt=@FILE or jwt=- (stdin)');
    const r = await client.request('POST', `auth/${mount}/login`, {
      role: pairs.role ?? '',
      jwt: String(pairs.jwt).trim(),
    });
    auth = r.body?.auth as Record<string, unknown>;
  } else if (method === 'oidc') {
    auth = await oidcLogin(inv, mount, Object.fromEntries(Object.entries(pairs).map(([k, v]) => [k, String(v)])));
  } else
    throw new LocalError(
      `unknown auth method "${inv.opts.method}": use token, approle, jwt, oidc, userpass, github or cert`,
    );
  // A login MFA enforcement may apply to any method: ask for the passcode as the vault CLI does.
  if (auth && !auth.client_token)
    auth = await completeMfa(auth, { request: client.request.bind(client), secret: inv.secret, stderr: inv.io.stderr });
  if (!auth?.client_token) throw new LocalError('the server returned no token');
  return auth;
}

/** The auth block of a token login, from its lookup-self data (what `vault login TOKEN` shows). */
function tokenAuth(token: string, d: Record<string, unknown>): Record<string, unknown> {
  const policies = (d.policies as string[] | undefined) ?? [];
  return {
    client_token: token,
    accessor: d.accessor ?? '',
    policies: [...policies, ...((d.identity_policies as string[] | undefined) ?? [])],
    token_policies: policies,
    identity_policies: d.identity_policies ?? null,
    metadata: d.meta ?? null,
    orphan: d.orphan ?? false,
    entity_id: d.entity_id ?? '',
    lease_duration: d.ttl ?? 0,
    renewable: d.renewable ?? false,
  };
}

export const login: CommandSpec = {
  words: ['login'],
  summary:
    'Log in and save the token: a token (stdin or argument), or -method=approle|jwt|oidc|userpass|github|cert with k=v pairs',
  args: [optArg('args', 'a token, or k=v pairs for the method (v may be @file or - for stdin)', { variadic: true })],
  flags: [
    flag('--method <method>', 'auth method type: token (default), approle, jwt, oidc, userpass, github, cert', {
      default: 'token',
    }),
    flag('--path <path>', 'mount path of the auth method (default: the method name)'),
    flag('--no-store', 'print the token instead of saving it'),
    flag('--client-cert <file>', 'PEM client certificate presented over TLS (cert method; env VAULT_CLIENT_CERT)'),
    flag('--client-key <file>', 'PEM private key of --client-cert (env VAULT_CLIENT_KEY)'),
  ],
  stdin: 'the token (method token), or values given as k=-',
  examples: [
    'keyhold login                      # token from stdin',
    'keyhold login -method=approle role_id=$ROLE_ID secret_id=-',
    'keyhold login -method=jwt role=ci jwt=@$TOKEN_FILE',
    'keyhold login -method=oidc role=people',
    'keyhold login -method=oidc skip_browser=true',
    'keyhold login -method=userpass username=alice          # password prompted without echo',
    'keyhold login -method=github token=-                   # token from stdin',
    'keyhold login -method=cert -client-cert=me.pem -client-key=me-key.pem',
  ],
  async run(inv) {
    // The vault CLI's -client-cert/-client-key: the TLS client certificate the client presents (cert method).
    if (inv.opts.clientCert) process.env.VAULT_CLIENT_CERT = String(inv.opts.clientCert);
    if (inv.opts.clientKey) process.env.VAULT_CLIENT_KEY = String(inv.opts.clientKey);
    const args = inv.args.args as string[];
    const method = String(inv.opts.method).toLowerCase();
    let token: string;
    let auth: Record<string, unknown> | null = null;
    let tokenPolicies: string[] = [];
    let lookup: Record<string, unknown> = {};
    if (method === 'token') {
      const client = inv.client;
      const arg = args[0];
      token = arg && arg !== '-' ? arg : await inv.secret('Token (will be hidden): ');
      if (!token) throw new LocalError('no token given on stdin');
      client.token = token;
      const res = await client.request('GET', 'auth/token/lookup-self');
      lookup = (res.body?.data as Record<string, unknown> | undefined) ?? {};
      tokenPolicies = (lookup.policies as string[] | undefined) ?? [];
    } else {
      auth = await methodLogin(inv, method, args);
      token = String(auth.client_token);
    }
    const g = inv.globals;
    // -format=json|yaml and -field print the login's answer as `vault login` does (the auth block).
    const machine = Boolean(g.field) || (g.format !== undefined && g.format !== 'table');
    const answer = { auth: auth ?? tokenAuth(token, lookup) };
    if (inv.opts.store === false)
      return machine ? inv.printSecret(answer) : inv.print(auth ? authRows(auth) : { token });
    const file = saveToken(token);
    if (machine) {
      if (!g.field)
        inv.success(`Success! You are now authenticated. The token was saved to ${file}; later commands use it.`);
      return inv.printSecret(answer);
    }
    if (!auth && inv.face === 'keyhold')
      return inv.success(`Success! Token saved to ${file} (policies: ${tokenPolicies.join(', ')})`);
    inv.success(`Success! You are now authenticated. The token was saved to ${file}; later commands use it.`);
    if (inv.face === 'vault') return inv.printSecret(answer);
    const rows = authRows(auth ?? answer.auth);
    inv.io.stdout.write(
      grid(
        ['Key', 'Value'],
        Object.entries(rows).map(([k, v]) => [k, Array.isArray(v) ? `[${v.join(' ')}]` : String(v)]),
      ),
    );
  },
};
