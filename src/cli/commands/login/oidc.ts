/**
 * The OIDC browser login (`keyhold login -method=oidc`), as the vault CLI does it
 * (vault-plugin-auth-jwt cli.go): listen on localhost:8250/oidc/callback, get auth_url, open the
 * browser, wait for the provider to send it back.
 */
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { createServer } from 'node:http';
import type { Invocation } from '../../command.js';
import { LocalError } from '../../errors.js';

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
export async function oidcLogin(
  inv: Invocation,
  mount: string,
  opts: Record<string, string>,
): Promise<Record<string, unknown>> {
  const listen = opts.listenaddress ?? 'localhost';
  const port = Number(opts.port ?? 8250);
  const cbHost = opts.callbackhost ?? 'localhost';
  const cbPort = Number(opts.callbackport ?? port);
  const cbMethod = opts.callbackmethod ?? 'http';
  const redirectUri = opts.redirect_uri ?? `${cbMethod}://${cbHost}:${cbPort}/oidc/callback`;
  const skipBrowser = ['1', 't', 'true'].includes(String(opts.skip_browser ?? 'false').toLowerCase());
  let clientNonce = '';
  for (let i = 0; i < 20; i++) clientNonce += B62[randomInt(62)];
  const client = inv.client;
  let settle!: { resolve: (a: Record<string, unknown>) => void; reject: (e: Error) => void };
  const done = new Promise<Record<string, unknown>>((resolve, reject) => (settle = { resolve, reject }));
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', redirectUri);
    if (u.pathname !== '/oidc/callback') {
      res.writeHead(404).end();
      return;
    }
    const q = new URLSearchParams({
      state: u.searchParams.get('state') ?? '',
      code: u.searchParams.get('code') ?? '',
      id_token: u.searchParams.get('id_token') ?? '',
      client_nonce: clientNonce,
    });
    client
      .request('GET', `auth/${mount}/oidc/callback?${q}`)
      .then((r) => {
        const auth = r.body?.auth as Record<string, unknown> | undefined;
        if (!auth?.client_token) throw new LocalError('the callback returned no token');
        res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end('<!doctype html><title>keyhold</title><p>Signed in to keyhold. You can close this window.</p>');
        settle.resolve(auth);
      })
      .catch((e: Error) => {
        res
          .writeHead(400, { 'content-type': 'text/html; charset=utf-8' })
          .end('<!doctype html><title>keyhold</title><p>Login failed; see the terminal.</p>');
        settle.reject(e);
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) =>
      reject(new LocalError(`cannot listen on ${listen}:${port}: ${(e as NodeJS.ErrnoException).code ?? e.message}`)),
    );
    server.listen(port, listen, resolve);
  });
  try {
    const body: Record<string, unknown> = { redirect_uri: redirectUri, client_nonce: clientNonce };
    if (opts.role) body.role = opts.role;
    const r = await client.request('POST', `auth/${mount}/oidc/auth_url`, body);
    const url = String((r.body?.data as Record<string, unknown> | undefined)?.auth_url ?? '');
    if (!url)
      throw new LocalError(
        `Unable to authorize role ${JSON.stringify(opts.role ?? '')} with redirect_uri ${JSON.stringify(redirectUri)}. Check Vault logs for more information.`,
      );
    if (skipBrowser)
      inv.io.stderr.write(
        `Complete the login via your OIDC provider. Open the following link in your browser:\n\n    ${url}\n\n\n`,
      );
    else {
      inv.io.stderr.write(`Complete the login via your OIDC provider. Launching browser to:\n\n    ${url}\n\n\n`);
      openBrowser(url);
    }
    inv.io.stderr.write('Waiting for OIDC authentication to complete...\n');
    const timer = setTimeout(
      () => settle.reject(new LocalError('Timed out waiting for response from provider')),
      120_000,
    );
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
