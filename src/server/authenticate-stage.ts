/**
 * The router's token stages: authenticate (the request's token, from the core's cache on the hot
 * path, else looked up; 403 when missing, unknown, expired or used outside its bound CIDRs), and after
 * the answer, the revocation of tokens on their last use (num_uses).
 */
import type { TokenInfo } from '../framework/context.js';
import { addressAllowed } from '../engines/auth-common/cidr.js';
import { refuseToken } from './audit-stage.js';
import { clientAddress, type Flow } from './flow.js';
import { tokenFrom } from './request-head.js';
import type { RouterCore } from './router-core.js';

/** The core's parts the token stages use. */
type TokenCore = Pick<RouterCore, 'lookupToken' | 'cachedToken' | 'audit' | 'telemetry' | 'requestDone' | 'logger'>;

/** Stage authenticate: the request's token (403 when missing or invalid, unless the request needs none). */
export function authenticate(core: TokenCore, f: Flow): Promise<void> | void {
  if (!f.open) {
    const cached = cachedToken(core, f);
    if (cached) {
      f.token = cached;
      return cached.boundCidrs ? checkTokenSource(core, f) : undefined;
    }
    return requireToken(core, f).then((t) => {
      // A limited-use token on a standby: its uses are counted by the active (one count for the
      // cluster), so the whole request goes there (Router.handle()'s NotActiveError path forwards it).
      if (t.mustForward)
        throw Object.assign(new Error('limited-use token: the active node counts its uses'), {
          name: 'NotActiveError',
        });
      f.token = t;
      return t.boundCidrs ? checkTokenSource(core, f) : undefined;
    });
  }
  const id = tokenFrom(f.req);
  if (!id) return;
  return core.lookupToken(id, { peek: true }).then((t) => {
    f.token = t;
  });
}

/** The request's token when the core can tell without storage (the hot path), else undefined. */
function cachedToken(core: TokenCore, f: Flow): TokenInfo | undefined {
  const id = tokenFrom(f.req);
  if (!id || !core.cachedToken) return undefined;
  const token = core.cachedToken(id);
  if (!token) return undefined; // unknown here: the full lookup decides (and answers 403)
  f.seen.push(token);
  return token;
}

/** The request's token, or 403 when it carries none or an unknown/expired one. */
export async function requireToken(core: TokenCore, f: Flow): Promise<TokenInfo> {
  const id = tokenFrom(f.req);
  if (!id) return refuseToken(core, f);
  const token = await core.lookupToken(id);
  if (!token) return refuseToken(core, f);
  f.seen.push(token);
  return token;
}

/**
 * A token bound to source CIDRs (token_bound_cidrs of its role) used from elsewhere: 403 as Vault
 * answers, audited like a bad token.
 */
function checkTokenSource(core: TokenCore, f: Flow): Promise<void> | void {
  const cidrs = f.token!.boundCidrs!;
  if (addressAllowed(clientAddress(f), cidrs)) return;
  return refuseToken(core, f);
}

/** After the answer: tokens on their last use (num_uses) are revoked. */
export async function spendTokens(core: TokenCore, f: Flow): Promise<void> {
  for (const t of f.seen) {
    if (t.lastUse && core.requestDone) {
      await core
        .requestDone(t)
        .catch((e: unknown) => core.logger.error('revoking a spent token failed', { error: (e as Error)?.message }));
    }
  }
}
