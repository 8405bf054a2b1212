/**
 * `sys/capabilities`, `sys/capabilities-self`, `sys/capabilities-accessor` and
 * `sys/internal/ui/resultant-acl` (vault/logical_system.go): what a token may do, computed by the same
 * ACL the router enforces (LIST lookup order, as Vault's ACL.Capabilities).
 */
import { invalid } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { TokenInfo } from '../../framework/context.js';
import { tokenInfo } from '../../auth/tokens.js';
import type { SysParts } from './sys-parts.js';

const route = routesFor<SysParts>();

const pathFields = { path: f.strings('Path (legacy single-path form)'), paths: f.strings('Paths to check') };

async function answer(parts: SysParts, token: TokenInfo, data: { path?: string[]; paths?: string[] }) {
  const paths = data.paths?.length ? data.paths : (data.path ?? []);
  if (!paths.length) throw invalid('paths', 'missing paths');
  const out: Record<string, unknown> = {};
  for (const p of paths) out[p] = await parts.access.capabilities(token, p.replace(/^\/+/, ''));
  // Vault keeps `capabilities` for a single path (backwards compatibility).
  if (paths.length === 1) out.capabilities = out[paths[0]!];
  return { data: out };
}

/** Routes answering capability questions. */
export const capabilitiesRoutes: AnyRoute[] = [
  route({
    path: 'capabilities-self',
    summary: "The calling token's capabilities on paths",
    fields: pathFields,
    operations: { update: async ({ engine, data, token }) => answer(engine, token!, data) },
  }),
  route({
    path: 'capabilities',
    summary: "Another token's capabilities on paths",
    fields: { token: f.string('Token to check').sensitive(), ...pathFields },
    operations: {
      update: async ({ engine, data }) => {
        if (!data.token) throw invalid('token', 'missing token');
        const t = await engine.access.lookupToken(data.token.trim(), { peek: true });
        if (!t) throw invalid('invalid token');
        return answer(engine, t, data);
      },
    },
  }),
  route({
    path: 'capabilities-accessor',
    summary: 'The capabilities on paths of the token with this accessor',
    fields: { accessor: f.string('Token accessor'), ...pathFields },
    operations: {
      update: async ({ engine, data }) => {
        if (!data.accessor) throw invalid('accessor', 'missing accessor');
        const e = await engine.tokens.lookupAccessor(data.accessor.trim());
        if (!e) throw invalid('invalid accessor');
        return answer(engine, tokenInfo('', e), data);
      },
    },
  }),
  route({
    path: 'internal/ui/resultant-acl',
    summary: "The calling token's merged ACL (exact and glob paths with their rules)",
    fields: {},
    operations: { read: async ({ engine, token }) => ({ data: await engine.access.resultantAcl(token!) }) },
  }),
];
