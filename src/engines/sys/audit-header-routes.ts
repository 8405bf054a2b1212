/**
 * `sys/config/auditing/request-headers` (Vault's vault/logical_system.go handleAuditedHeaders*):
 * which request headers audit entries carry, each optionally HMACed. Root-protected as in Vault.
 */
import { auditBrokerOf, type AuditBroker } from '../../audit/audit-broker.js';
import { internal, invalid } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';

const route = routesFor<unknown>();

function broker(engine: unknown): AuditBroker {
  const b = auditBrokerOf(engine);
  if (!b) throw internal('audit broker is not attached');
  return b;
}

const HEADER = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The audited-headers routes. */
export const auditHeaderRoutes: AnyRoute[] = [
  route({
    path: 'config/auditing/request-headers',
    summary: 'List the request headers audit entries carry',
    fields: {},
    sudo: true,
    operations: { read: ({ engine }) => ({ data: { headers: broker(engine).auditedHeaders() } }) },
  }),
  route({
    path: 'config/auditing/request-headers/:header',
    summary: 'Read, add or remove an audited request header',
    fields: { header: f.name('Header name'), hmac: f.bool('Log the value HMACed (default false)') },
    sudo: true,
    operations: {
      read: ({ engine, data }) => {
        const h = broker(engine).auditedHeaders()[data.header.toLowerCase()];
        return h ? { data: { [data.header.toLowerCase()]: h } } : undefined;
      },
      update: async ({ engine, data }) => {
        if (!HEADER.test(data.header))
          throw invalid('header', `"${data.header.slice(0, 64)}" is not a valid HTTP header name`);
        await broker(engine).setAuditedHeader(data.header, data.hmac ?? false);
      },
      delete: async ({ engine, data }) => {
        await broker(engine).deleteAuditedHeader(data.header);
      },
    },
  }),
];
