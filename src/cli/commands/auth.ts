/**
 * Auth methods and logins: `keyhold auth enable|disable|list|tune` and `keyhold login -method=...`
 * (token, approle, jwt, oidc; userpass, github and cert through ../login-people.ts), in the vault CLI's forms (hashicorp/vault command/auth_*.go, login.go;
 * vault-plugin-auth-jwt cli.go for the OIDC browser flow on localhost:8250/oidc/callback).
 */
import { Command } from 'commander';
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname } from 'node:path';
import type { CliContext } from '../context.js';
import { LocalError } from '../client.js';
import { tokenFile } from '../../framework/paths.js';
import { grid, success } from '../output.js';
import { PEOPLE_METHODS, peopleLogin } from '../login-people.js';

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
function authRows(a: Record<string, unknown>): Record<string, unknown> {
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

const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Open `url` in the desktop browser; failures are ignored (the URL is printed anyway). */
function openBrowser(url: string): void {
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'rundll32' : 'xdg-open';
  const args = process.platform === 'win32' ? ['url.dll,FileProtocolHandler', url] : [url];
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    /* printed URL is the fallback */
  }
}

/** The OIDC browser flow: listen for the callback, get auth_url, wait for the provider to send the browser back. */
async function oidcLogin(ctx: CliContext, cmd: Command, mount: string, opts: Record<string, string>): Promise<Record<string, unknown>> {
  const listen = opts.listenaddress ?? 'localhost';
  const port = Number(opts.port ?? 8250);
  const cbHost = opts.callbackhost ?? 'localhost';
  const cbPort = Number(opts.callbackport ?? port);
  const cbMethod = opts.callbackmethod ?? 'http';
  const redirectUri = opts.redirect_uri ?? `${cbMethod}://${cbHost}:${cbPort}/oidc/callback`;
  const skipBrowser = ['1', 't', 'true'].includes(String(opts.skip_browser ?? 'false').toLowerCase());
  let clientNonce = '';
  for (let i = 0; i < 20; i++) clientNonce += B62[randomInt(62)];
  const client = ctx.client(cmd);
  let settle!: { resolve: (a: Record<string, unknown>) => void; reject: (e: Error) => void };
  const done = new Promise<Record<string, unknown>>((resolve, reject) => (settle = { resolve, reject }));
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', redirectUri);
    if (u.pathname !== '/oidc/callback') {
      res.writeHead(404).end();
      return;
    }
    const q = new URLSearchParams({ state: u.searchParams.get('state') ?? '', code: u.searchParams.get('code') ?? '', id_token: u.searchParams.get('id_token') ?? '', client_nonce: clientNonce });
    client
      .request('GET', `auth/${mount}/oidc/callback?${q}`)
      .then((r) => {
        const auth = r.body?.auth as Record<string, unknown> | undefined;
        if (!auth?.client_token) throw new LocalError('the callback returned no token');
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>keyhold</title><p>Signed in to keyhold. You can close this window.</p>');
        settle.resolve(auth);
      })
      .catch((e: Error) => {
        res.writeHead(400, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>keyhold</title><p>Login failed; see the terminal.</p>');
        settle.reject(e);
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) => reject(new LocalError(`cannot listen on ${listen}:${port}: ${(e as NodeJS.ErrnoException).code ?? e.message}`)));
    server.listen(port, listen, resolve);
  });
  try {
    const body: Record<string, unknown> = { redirect_uri: redirectUri, client_nonce: clientNonce };
    if (opts.role) body.role = opts.role;
    const r = await client.request('POST', `auth/${mount}/oidc/auth_url`, body);
    const url = String((r.body?.data as Record<string, unknown> | undefined)?.auth_url ?? '');
    if (!url) throw new LocalError(`Unable to authorize role ${JSON.stringify(opts.role ?? '')} with redirect_uri ${JSON.stringify(redirectUri)}. Check Vault logs for more information.`);
    if (skipBrowser) process.stderr.write(`Complete the login via your OIDC provider. Open the following link in your browser:\n\n    ${url}\n\n\n`);
    else {
      process.stderr.write(`Complete the login via your OIDC provider. Launching browser to:\n\n    ${url}\n\n\n`);
      openBrowser(url);
    }
    process.stderr.write('Waiting for OIDC authentication to complete...\n');
    const timer = setTimeout(() => settle.reject(new LocalError('Timed out waiting for response from provider')), 120_000);
    try {
      return await done;
    } finally {
      clearTimeout(timer);
    }
  } finally {
    server.close();
    server.closeAllConnections?.();
  }
}

/** Register `auth ...` and `login`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('login')
    .description('Log in and save the token: a token (stdin or argument), or -method=approle|jwt|oidc|userpass|github|cert with k=v pairs')
    .argument('[args...]', 'a token, or k=v pairs for the method (v may be @file or - for stdin)')
    .option('--method <method>', 'auth method type: token (default), approle, jwt, oidc, userpass, github, cert', 'token')
    .option('--path <path>', 'mount path of the auth method (default: the method name)')
    .option('--no-store', 'print the token instead of saving it')
    .option('--client-cert <file>', 'PEM client certificate presented over TLS (cert method; env VAULT_CLIENT_CERT)')
    .option('--client-key <file>', 'PEM private key of --client-cert (env VAULT_CLIENT_KEY)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ keyhold login                      # token from stdin\n  $ keyhold login -method=approle role_id=$ROLE_ID secret_id=-\n  $ keyhold login -method=jwt role=ci jwt=@$TOKEN_FILE\n  $ keyhold login -method=oidc role=people\n  $ keyhold login -method=oidc skip_browser=true\n  $ keyhold login -method=userpass username=alice        # password prompted without echo\n  $ keyhold login -method=github token=-                 # token from stdin\n  $ keyhold login -method=cert -client-cert=me.pem -client-key=me-key.pem',
    )
    .action(async (args: string[], o: { method: string; path?: string; store: boolean; clientCert?: string; clientKey?: string }, cmd: Command) => {
      // The vault CLI's -client-cert/-client-key: the TLS client certificate (cert method) the client presents.
      if (o.clientCert) process.env.VAULT_CLIENT_CERT = o.clientCert;
      if (o.clientKey) process.env.VAULT_CLIENT_KEY = o.clientKey;
      const client = ctx.client(cmd);
      let token: string;
      let auth: Record<string, unknown> | null = null;
      let tokenPolicies: string[] = [];
      const method = o.method.toLowerCase();
      if (method === 'token') {
        const arg = args[0];
        token = arg && arg !== '-' ? arg : await ctx.secret('Token (will be hidden): ');
        if (!token) throw new LocalError('no token given on stdin');
        client.token = token;
        const res = await client.request('GET', 'auth/token/lookup-self');
        tokenPolicies = ((res.body?.data as Record<string, unknown> | undefined)?.policies as string[] | undefined) ?? [];
      } else {
        const pairs = PEOPLE_METHODS.includes(method) ? {} : await ctx.parsePairs(args);
        const mount = (o.path ?? method).replace(/^\/+|\/+$/g, '');
        // Login paths need no token; a stale saved one must not be sent along.
        client.token = undefined;
        if (method === 'approle') {
          const r = await client.request('POST', `auth/${mount}/login`, { role_id: String(pairs.role_id ?? '').trim(), secret_id: String(pairs.secret_id ?? '').trim() });
          auth = r.body?.auth as Record<string, unknown>;
        } else if (method === 'jwt') {
          if (pairs.jwt === undefined) throw new LocalError('jwt=... is required: give the token as jwt=@FILE or jwt=- (stdin)');
          const r = await client.request('POST', `auth/${mount}/login`, { role: pairs.role ?? '', jwt: String(pairs.jwt).trim() });
          auth = r.body?.auth as Record<string, unknown>;
        } else if (method === 'oidc') {
          auth = await oidcLogin(ctx, cmd, mount, Object.fromEntries(Object.entries(pairs).map(([k, v]) => [k, String(v)])));
        } else if (PEOPLE_METHODS.includes(method)) {
          auth = await peopleLogin(method, mount, args, { request: client.request.bind(client), secret: ctx.secret, parsePairs: ctx.parsePairs, env: process.env, stderr: process.stderr });
        } else throw new LocalError(`unknown auth method "${o.method}": use token, approle, jwt, oidc, userpass, github or cert`);
        if (!auth?.client_token) throw new LocalError('the server returned no token');
        token = String(auth.client_token);
      }
      if (o.store === false) {
        await ctx.print(cmd, auth ? authRows(auth) : { token });
        return;
      }
      const file = saveToken(token);
      if (auth) {
        success(`Success! You are now authenticated. The token was saved to ${file}; later commands use it.`);
        const rows = authRows(auth);
        const g = ctx.globals(cmd);
        if (g.format || g.field) await ctx.print(cmd, rows);
        else process.stdout.write(grid(['Key', 'Value'], Object.entries(rows).map(([k, v]) => [k, Array.isArray(v) ? `[${v.join(' ')}]` : String(v)])));
      } else success(`Success! Token saved to ${file} (policies: ${tokenPolicies.join(', ')})`);
    });

  const auth = program.command('auth').description('Enable, list, tune and disable auth methods');
  auth
    .command('enable')
    .description('Enable an auth method (approle, jwt, oidc, userpass, github, cert)')
    .argument('<type>', 'method type')
    .option('--path <path>', 'mount path under auth/ (default: the type)')
    .option('--description <text>', 'human description')
    .option('--default-lease-ttl <duration>', 'default token TTL')
    .option('--max-lease-ttl <duration>', 'max token TTL')
    .option('--token-type <type>', 'default-service or service')
    .option('--listing-visibility <v>', 'unauth or hidden')
    .addHelpText('after', '\nExamples:\n  $ keyhold auth enable approle\n  $ keyhold auth enable -path=github jwt')
    .action(async (type: string, o: Record<string, string | undefined>, cmd: Command) => {
      const path = (o.path ?? type).replace(/^\/+|\/+$/g, '');
      const config: Record<string, unknown> = {};
      if (o.defaultLeaseTtl) config.default_lease_ttl = o.defaultLeaseTtl;
      if (o.maxLeaseTtl) config.max_lease_ttl = o.maxLeaseTtl;
      if (o.tokenType) config.token_type = o.tokenType;
      if (o.listingVisibility) config.listing_visibility = o.listingVisibility;
      await ctx.client(cmd).write(`sys/auth/${path}`, { type, description: o.description ?? '', config });
      success(`Success! Enabled ${type} auth method at: ${path}/`);
    });
  auth
    .command('disable')
    .description('Disable an auth method (revokes every token it issued)')
    .argument('<path>')
    .action(async (path: string, _o, cmd: Command) => {
      const p = path.replace(/^\/+|\/+$/g, '');
      await ctx.client(cmd).delete(`sys/auth/${p}`);
      success(`Success! Disabled the auth method (if it existed) at: ${p}/`);
    });
  auth
    .command('list')
    .description('List enabled auth methods')
    .option('--detailed', 'show accessors, TTLs and token types')
    .action(async (o: { detailed?: boolean }, cmd: Command) => {
      const res = await ctx.client(cmd).read('sys/auth');
      const data = (res.body?.data ?? {}) as Record<string, Record<string, unknown>>;
      const g = ctx.globals(cmd);
      if (g.format || g.field) {
        await ctx.print(cmd, data);
        return;
      }
      const paths = Object.keys(data).sort();
      const rows = paths.map((p) => {
        const m = data[p]!;
        const c = (m.config ?? {}) as Record<string, unknown>;
        return o.detailed ? [p, String(m.type), String(m.accessor), String(c.default_lease_ttl || 'system'), String(c.max_lease_ttl || 'system'), String(c.token_type), String(m.description)] : [p, String(m.type), String(m.accessor), String(m.description)];
      });
      process.stdout.write(grid(o.detailed ? ['Path', 'Type', 'Accessor', 'Default TTL', 'Max TTL', 'Token Type', 'Description'] : ['Path', 'Type', 'Accessor', 'Description'], rows));
    });
  auth
    .command('tune')
    .description('Tune an auth method (TTLs, description, token type)')
    .argument('<path>')
    .option('--description <text>', 'human description')
    .option('--default-lease-ttl <duration>', 'default token TTL ("system" resets)')
    .option('--max-lease-ttl <duration>', 'max token TTL ("system" resets)')
    .option('--token-type <type>', 'default-service or service')
    .option('--listing-visibility <v>', 'unauth or hidden')
    .action(async (path: string, o: Record<string, string | undefined>, cmd: Command) => {
      const p = path.replace(/^\/+|\/+$/g, '');
      const body: Record<string, unknown> = {};
      if (o.description !== undefined) body.description = o.description;
      if (o.defaultLeaseTtl) body.default_lease_ttl = o.defaultLeaseTtl;
      if (o.maxLeaseTtl) body.max_lease_ttl = o.maxLeaseTtl;
      if (o.tokenType) body.token_type = o.tokenType;
      if (o.listingVisibility) body.listing_visibility = o.listingVisibility;
      await ctx.client(cmd).write(`sys/auth/${p}/tune`, body);
      success(`Success! Tuned the auth method at: ${p}/`);
    });
}
