/**
 * `sys/wrapping/*` (Vault's handleWrapping* in vault/logical_system.go): wrap arbitrary data, look up,
 * unwrap (once) and rewrap response-wrapping tokens. The wrapping itself happens in the router's wrap
 * stage; these handlers only read and retire the tokens.
 */
import { denied, invalid } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute, type Reply } from '../../framework/route.js';
import type { RequestContext } from '../../framework/context.js';
import type { SysParts } from './sys-parts.js';

const route = routesFor<SysParts>();

/** The token a caller names: `token` in the body (a third party unwrapping), else the request's own. */
function tokenArg(ctx: RequestContext<SysParts, { token?: string }>): {
  token: string | undefined;
  thirdParty: boolean;
} {
  const body = ctx.data.token?.trim();
  if (body) return { token: body, thirdParty: true };
  const x = ctx.headers['x-vault-token'];
  const auth = ctx.headers.authorization;
  const header =
    typeof x === 'string' && x !== ''
      ? x
      : typeof auth === 'string' && auth.startsWith('Bearer ')
        ? auth.slice(7).trim()
        : undefined;
  return { token: header, thirdParty: false };
}

/**
 * A third party (wrapping token in the body) must itself hold `update` on the path. These routes are
 * unauthenticated so that a bad wrapping token in the header answers Vault's 400, not a 403.
 */
function requireCaller(ctx: RequestContext<SysParts, unknown>, path: string): void {
  if (!ctx.token || !ctx.allowed('update', path)) throw denied();
}

function wrapInfoReply(info: Record<string, unknown>, requestId: string): Reply {
  const body = `{"request_id":"${requestId}","lease_id":"","renewable":false,"lease_duration":0,"data":null,"wrap_info":${JSON.stringify(info)},"warnings":null,"auth":null,"mount_type":""}\n`;
  return { raw: { contentType: 'application/json', body, status: 200 }, wrapInfo: { ...info } };
}

/** Routes of sys/wrapping. */
export const wrappingRoutes: AnyRoute[] = [
  route({
    path: 'wrapping/wrap',
    summary: 'Wrap the request data in a single-use response-wrapping token (needs X-Vault-Wrap-TTL)',
    fields: {},
    anyFields: true,
    operations: {
      update: ({ raw, headers }) => {
        const h = headers['x-vault-wrap-ttl'];
        if (h === undefined || h === '' || h === '0') throw invalid('endpoint requires response wrapping to be used');
        return { data: { ...raw } };
      },
    },
  }),
  route({
    path: 'wrapping/lookup',
    summary: 'Creation time, TTL and path of a response-wrapping token (does not use it)',
    fields: { token: f.string('Wrapping token').sensitive() },
    unauthenticated: true,
    operations: {
      update: async (ctx) => {
        const { token } = tokenArg(ctx);
        if (!token) throw invalid('missing "token" value in input');
        return { data: await ctx.engine.wrapping.lookup(token) };
      },
      read: async (ctx) => {
        const { token } = tokenArg(ctx);
        if (!token) throw invalid('missing "token" value in input');
        return { data: await ctx.engine.wrapping.lookup(token) };
      },
    },
  }),
  route({
    path: 'wrapping/unwrap',
    summary: 'Unwrap a response-wrapping token: the original answer, once',
    fields: { token: f.string('Wrapping token (else the request token is the wrapping token)').sensitive() },
    unauthenticated: true,
    operations: {
      update: async (ctx) => {
        const { token, thirdParty } = tokenArg(ctx);
        if (thirdParty) requireCaller(ctx, 'sys/wrapping/unwrap');
        const body = await ctx.engine.wrapping.unwrap(token);
        if (body === '') return;
        return {
          raw: { contentType: 'application/json', body: body.endsWith('\n') ? body : body + '\n', status: 200 },
          data: null,
        };
      },
    },
  }),
  route({
    path: 'wrapping/rewrap',
    summary: 'Move a wrapped answer to a new wrapping token (same TTL); the old token stops working',
    fields: { token: f.string('Wrapping token').sensitive() },
    operations: {
      update: async (ctx) => {
        const { token } = tokenArg(ctx);
        const info = await ctx.engine.wrapping.rewrap(token);
        return wrapInfoReply({ ...info }, ctx.requestId);
      },
    },
  }),
];
