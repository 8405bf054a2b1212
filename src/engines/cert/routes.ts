/** cert auth routes (Vault's builtin/credential/cert API): certs (roles), crls, config, login. */
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import { tokenFields, tokenParamsView } from '../auth-common/token-params.js';
import { type CertEngine, type CertRole, certName } from './cert-engine.js';

const route = routesFor<CertEngine>();

const roleFields = {
  name: f.name('Role name'),
  certificate: f.string('PEM CA or client certificate(s) trusted by this role'),
  display_name: f.string('Display name of issued tokens (default: the role name)'),
  allowed_names: f.strings('Deprecated: common names, DNS or email SANs allowed (globs)'),
  allowed_common_names: f.strings('Common names allowed (globs)'),
  allowed_dns_sans: f.strings('DNS SANs allowed (globs)'),
  allowed_email_sans: f.strings('Email SANs allowed (globs)'),
  allowed_uri_sans: f.strings('URI SANs allowed (globs)'),
  allowed_organizational_units: f.strings('Organizational units allowed (globs)'),
  required_extensions: f.strings('Extensions the certificate must have, "<oid>:<value glob>"'),
  allowed_metadata_extensions: f.strings('Extension OIDs copied into token metadata'),
  ocsp_enabled: f.bool('Not supported (400 when true)'),
  ocsp_ca_certificates: f.string('Not supported'),
  ocsp_servers_override: f.strings('Not supported'),
  ocsp_fail_open: f.bool('Not supported'),
  ocsp_query_all_servers: f.bool('Not supported'),
  lease: f.duration('Deprecated: use token_ttl'),
  ...tokenFields,
};

/** The role read view (pathCertRead). */
function roleView(r: CertRole): Record<string, unknown> {
  const data: Record<string, unknown> = {
    certificate: r.certificate,
    display_name: r.display_name,
    allowed_names: r.allowed_names,
    allowed_common_names: r.allowed_common_names,
    allowed_dns_sans: r.allowed_dns_sans,
    allowed_email_sans: r.allowed_email_sans,
    allowed_uri_sans: r.allowed_uri_sans,
    allowed_organizational_units: r.allowed_organizational_units,
    required_extensions: r.required_extensions,
    allowed_metadata_extensions: r.allowed_metadata_extensions,
    ocsp_enabled: false,
    ocsp_ca_certificates: '',
    ocsp_servers_override: [],
    ocsp_fail_open: false,
    ocsp_query_all_servers: false,
    ...tokenParamsView(r),
  };
  if (r.legacy_policies?.length) data.policies = r.token_policies;
  return data;
}

/** Routes of a cert mount. */
export const certRoutes: AnyRoute[] = [
  route({
    path: 'login',
    summary: 'Log in with the TLS client certificate of this connection',
    fields: { name: f.string('Only try this role') },
    unauthenticated: true,
    operations: {
      update: async ({ engine, data, tls }) => {
        const { auth, warnings } = await engine.login(tls, data.name || undefined);
        return { auth, data: null, ...(warnings.length ? { warnings } : {}) };
      },
    },
  }),
  route({
    path: 'certs',
    summary: 'List roles',
    fields: {},
    operations: { list: async ({ engine }) => ({ data: { keys: await engine.listRoles() } }) },
  }),
  route({
    path: 'certs/:name',
    summary: 'Create, read, update or delete a role (trusted certificates and constraints)',
    fields: roleFields,
    exists: async ({ engine, data }) => (await engine.role(certName(data.name))) !== null,
    operations: {
      read: async ({ engine, data }) => {
        const r = await engine.role(certName(data.name));
        return r ? { data: roleView(r) } : undefined;
      },
      update: async ({ engine, data }) => {
        const input = { ...data } as Record<string, unknown>;
        if (input.lease !== undefined && input.token_ttl === undefined && input.ttl === undefined)
          input.token_ttl = input.lease;
        const warnings = await engine.writeRole(certName(data.name), input);
        return warnings.length ? { data: null, warnings } : undefined;
      },
      delete: async ({ engine, data }) => engine.deleteRole(certName(data.name)),
    },
  }),
  route({
    path: 'crls',
    summary: 'List CRLs',
    fields: {},
    operations: { list: async ({ engine }) => ({ data: { keys: await engine.listCrls() } }) },
  }),
  route({
    path: 'crls/:name',
    summary: 'Add, read or delete a CRL (certificates it lists cannot log in)',
    fields: { name: f.name('CRL name'), crl: f.string('PEM CRL') },
    operations: {
      read: async ({ engine, data }) => {
        const c = await engine.crl(certName(data.name));
        return c ? { data: { serials: c.serials } } : undefined;
      },
      update: async ({ engine, data }) => engine.writeCrl(certName(data.name), data.crl),
      delete: async ({ engine, data }) => engine.deleteCrl(certName(data.name)),
    },
  }),
  route({
    path: 'config',
    summary: 'Mount settings',
    fields: {
      disable_binding: f.bool('Do not re-check the certificate on renewal'),
      enable_identity_alias_metadata: f.bool('Copy login metadata to the identity alias'),
      ocsp_cache_size: f.int('Accepted (OCSP is not supported)'),
      role_cache_size: f.int('Accepted'),
      enable_metadata_on_failures: f.bool('Accepted'),
    },
    operations: {
      read: async ({ engine }) => ({ data: { ...(await engine.config()) } }),
      update: async ({ engine, data }) => engine.writeConfig(data),
    },
  }),
];
