/**
 * Login MFA routes (Vault's identity/mfa/method/totp, identity/mfa/login-enforcement, and
 * sys/mfa/validate), served by two internal mounts: `identity/mfa/` and `sys/mfa/` (the core
 * mounts them next to identity/ and sys/; the longer path wins).
 */
import type { LoginMfa } from '../../auth/mfa/login-mfa.js';
import { methodView } from '../../auth/mfa/login-mfa.js';
import { invalid } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { type AnyRoute, routesFor } from '../../framework/route.js';

const route = routesFor<LoginMfa>();

const totpFields = {
  method_name: f.string('Unique name of the method (X-Vault-MFA may name it)'),
  issuer: f.string('Issuer shown in authenticator apps (required)'),
  period: f.duration('Seconds a code is valid (default 30)'),
  key_size: f.int('Secret size in bytes (default 20)'),
  qr_size: f.int('Accepted; keyhold answers the otpauth URL, not a QR image'),
  algorithm: f.string('SHA1 (default), SHA256 or SHA512'),
  digits: f.int('6 (default) or 8'),
  skew: f.int('Periods before and after now also accepted: 0 or 1 (default)'),
  max_validation_attempts: f.int('Failed validations before the entity must wait a period (default 5)'),
};

const enforcementFields = {
  name: f.name('Enforcement name'),
  mfa_method_ids: f.strings('MFA method ids (required)'),
  auth_method_accessors: f.strings('Auth mount accessors whose logins need MFA'),
  auth_method_types: f.strings('Auth method types whose logins need MFA'),
  identity_group_ids: f.strings('Groups whose members need MFA'),
  identity_entity_ids: f.strings('Entities that need MFA'),
};

/** Routes of the identity/mfa/ mount. */
export const identityMfaRoutes: AnyRoute[] = [
  route({
    path: 'method/totp',
    summary: 'Create a TOTP method, or list them',
    fields: totpFields,
    operations: {
      update: async ({ engine, data }) => ({ data: { method_id: await engine.writeMethod(null, data) } }),
      list: async ({ engine }) => {
        const ms = await engine.methods();
        return {
          data: { keys: ms.map((m) => m.id), key_info: Object.fromEntries(ms.map((m) => [m.id, methodView(m)])) },
        };
      },
    },
  }),
  route({
    path: 'method',
    summary: 'List MFA methods of every type',
    fields: {},
    operations: {
      list: async ({ engine }) => {
        const ms = await engine.methods();
        return {
          data: { keys: ms.map((m) => m.id), key_info: Object.fromEntries(ms.map((m) => [m.id, methodView(m)])) },
        };
      },
    },
  }),
  route({
    path: 'method/totp/generate',
    summary: "Generate a TOTP secret for the calling token's entity",
    fields: { method_id: f.string('Method id').required() },
    operations: {
      update: async ({ engine, data, token }) => {
        const out = await engine.generate(data.method_id, token?.entityId ?? '');
        return out
          ? { data: out }
          : { data: null, warnings: [`Entity already has a secret for MFA method "${data.method_id}"`] };
      },
    },
  }),
  route({
    path: 'method/totp/admin-generate',
    summary: 'Generate a TOTP secret for an entity',
    fields: { method_id: f.string('Method id').required(), entity_id: f.string('Entity id').required() },
    operations: {
      update: async ({ engine, data }) => {
        const out = await engine.generate(data.method_id, data.entity_id);
        return out
          ? { data: out }
          : { data: null, warnings: [`Entity already has a secret for MFA method "${data.method_id}"`] };
      },
    },
  }),
  route({
    path: 'method/totp/admin-destroy',
    summary: "Destroy an entity's TOTP secret",
    fields: { method_id: f.string('Method id').required(), entity_id: f.string('Entity id').required() },
    operations: { update: async ({ engine, data }) => engine.destroy(data.method_id, data.entity_id) },
  }),
  route({
    path: 'method/totp/:method_id',
    summary: 'Read, update or delete a TOTP method',
    fields: { method_id: f.name('Method id'), ...totpFields },
    operations: {
      read: async ({ engine, data }) => {
        const m = await engine.method(data.method_id);
        return m ? { data: methodView(m) } : undefined;
      },
      update: async ({ engine, data }) => {
        await engine.writeMethod(data.method_id, data);
      },
      delete: async ({ engine, data }) => engine.deleteMethod(data.method_id),
    },
  }),
  route({
    path: 'method/:method_id',
    summary: 'Read an MFA method of any type',
    fields: { method_id: f.name('Method id') },
    operations: {
      read: async ({ engine, data }) => {
        const m = await engine.method(data.method_id);
        return m ? { data: methodView(m) } : undefined;
      },
    },
  }),
  route({
    path: 'login-enforcement',
    summary: 'List login enforcements',
    fields: {},
    operations: {
      list: async ({ engine }) => {
        const es = await engine.enforcements();
        return {
          data: {
            keys: es.map((e) => e.name).sort(),
            key_info: Object.fromEntries(es.map((e) => [e.name, { ...e, namespace_id: 'root' }])),
          },
        };
      },
    },
  }),
  route({
    path: 'login-enforcement/:name',
    summary: 'Create, read, update or delete a login enforcement',
    fields: enforcementFields,
    operations: {
      read: async ({ engine, data }) => {
        const e = await engine.enforcement(data.name);
        return e ? { data: { ...e, namespace_id: 'root' } } : undefined;
      },
      update: async ({ engine, data }) => engine.writeEnforcement(data.name, data),
      delete: async ({ engine, data }) => engine.deleteEnforcement(data.name),
    },
  }),
];

/** Routes of the sys/mfa/ mount. */
export const sysMfaRoutes: AnyRoute[] = [
  route({
    path: 'validate',
    summary: 'Complete a login that answered mfa_requirement',
    fields: {
      mfa_request_id: f.string('The mfa_request_id of the login'),
      mfa_payload: f.map('Method id (or name) -> [passcode]'),
    },
    unauthenticated: true,
    operations: {
      update: async ({ engine, data }) => {
        if (!data.mfa_request_id) throw invalid('mfa_request_id', 'missing');
        if (!data.mfa_payload) throw invalid('mfa_payload', 'missing');
        const { auth, warnings } = await engine.validate(data.mfa_request_id, data.mfa_payload);
        return { auth, data: null, ...(warnings.length ? { warnings } : {}) };
      },
    },
  }),
];
