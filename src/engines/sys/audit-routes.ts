/** The `sys/audit` routes: list, enable and disable audit devices; `sys/audit-hash` to search the log. */
import { auditBrokerOf, type AuditBroker } from '../../audit/audit-broker.js';
import { internal, invalid } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { SysParts } from './sys-parts.js';

const route = routesFor<SysParts>();

function broker(parts: SysParts): AuditBroker {
  const b = auditBrokerOf(parts);
  if (!b) throw internal('audit broker is not attached');
  return b;
}

/** Audit routes (Vault's `sys/audit`, `sys/audit/:path`, `sys/audit-hash/:path`); listing and changes need sudo, as in Vault. */
export const auditRoutes: AnyRoute[] = [
  route({
    path: 'audit',
    summary: 'List enabled audit devices',
    fields: {},
    sudo: true,
    operations: { read: ({ engine }) => ({ data: broker(engine).list() }) },
  }),
  route({
    path: 'audit/*path',
    summary: 'Enable or disable an audit device',
    description:
      'The file device writes one JSON line per request and response; every string value of the data is logged as hmac-sha256:<hex> under a per-device salt.',
    fields: {
      path: f.name('Device path, e.g. "file"'),
      type: f.string('Device type: file, socket or syslog'),
      description: f.string('Human description').default(''),
      options: f.stringMap(
        'Device options: file_path (or path), mode (file); address, socket_type, write_timeout (socket); facility, tag, address (syslog); hmac_accessor, elide_list_responses, prefix, format',
      ),
      local: f.bool('Accepted for compatibility').default(false),
    },
    sudo: true,
    operations: {
      update: async ({ engine, data }) => {
        if (!data.type) throw invalid('type', 'is required');
        await broker(engine).enable(data.path, {
          type: data.type,
          description: data.description,
          options: data.options ?? {},
          local: data.local,
        });
      },
      delete: async ({ engine, data }) => {
        await broker(engine).disable(data.path);
      },
    },
  }),
  route({
    path: 'audit-hash/*path',
    summary: 'Hash a value as an audit device logs it, to search the log',
    fields: {
      path: f.name('Device path'),
      input: f.string('Value to hash').sensitive().required(),
    },
    operations: {
      update: ({ engine, data }) => ({ data: { hash: broker(engine).hash(data.path, data.input) } }),
    },
  }),
];
