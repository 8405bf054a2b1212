/**
 * Seal routes as Vault serves them (bare JSON, no token): sys/seal-status, sys/init, sys/unseal,
 * sys/rekey/{init,update,verify} and sys/rekey-recovery-key/{init,update,verify}.
 * Anchors: http/sys_init.go, http/sys_seal.go, http/sys_rekey.go, vault/logical_system.go (seal status).
 */
import { invalid } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { SysParts } from './sys-parts.js';
import { versionFields } from './reported-version.js';

const route = routesFor<SysParts>();

/** A bare JSON answer without the envelope (Vault's seal-status, init, unseal, rekey). */
function rawJson(body: unknown, status = 200) {
  return { raw: { contentType: 'application/json', body: JSON.stringify(body) + '\n', status } };
}

/** Vault's SealStatusResponse, plus keyhold's keychain fields. */
export function sealStatus(parts: SysParts): Record<string, unknown> {
  const s = parts.seal.sealer.status();
  const out: Record<string, unknown> = {
    type: s.type,
    initialized: parts.seal.isInitialized(),
    sealed: parts.seal.isSealed(),
    t: s.t,
    n: s.n,
    progress: s.progress,
    nonce: s.nonce,
    ...versionFields(parts.version, parts.reportedVersion),
    build_date: '',
    migration: s.migration,
    recovery_seal: s.recovery_seal,
    storage_type: parts.seal.backend.describe().split(':')[0],
  };
  if (s.recovery_seal_type) out.recovery_seal_type = s.recovery_seal_type;
  // Vault omits cluster name and id while sealed [vault src api/sys_seal.go].
  if (!parts.seal.isSealed()) {
    out.cluster_name = 'keyhold';
    out.cluster_id = parts.seal.sealConfig?.storage_id ?? '';
  }
  out.keychain = parts.seal.keychain.describe();
  out.keychain_unseal = Boolean(parts.seal.sealConfig?.keychain_account);
  return out;
}

const hexAndB64 = (keys: Buffer[]) => ({
  hex: keys.map((k) => k.toString('hex')),
  b64: keys.map((k) => k.toString('base64')),
});

const keyField = () => f.string('An unseal (or recovery) key part, hex or base64').sensitive();
const nonceField = () => f.string('Nonce of the operation in progress');
const rekeyInitFields = {
  secret_shares: f.int('Number of key shares to split the new key into').default(0),
  secret_threshold: f.int('Number of shares needed to rebuild the new key').default(0),
  stored_shares: f.int('Accepted for compatibility (Vault forces 1 where it matters)'),
  pgp_keys: f.strings(
    'OpenPGP public keys (base64 of the binary key), one per new share: each share is returned encrypted to its key',
  ),
  backup: f.bool('Keep the PGP-encrypted new shares for sys/rekey/backup (needs pgp_keys)'),
  require_verification: f.bool(
    'Require the new shares to be given back through rekey/verify before the rekey takes effect',
  ),
};

/** The rekey routes for the barrier (`sys/rekey`) or recovery key (`sys/rekey-recovery-key`). */
function rekeyRoutes(prefix: 'rekey' | 'rekey-recovery-key'): AnyRoute[] {
  const recovery = prefix === 'rekey-recovery-key';
  const what = recovery ? 'recovery key' : 'unseal key';
  return [
    route({
      path: `${prefix}/init`,
      summary: `Start, read or cancel a rekey of the ${what}`,
      description: recovery
        ? 'Only with an auto seal (transit, pkcs11): new recovery key shares, authorised by a threshold of the current ones.'
        : 'Shamir seal: new unseal key shares (and a new master key; the OS keychain entry follows). Auto seal: a new master key wrapped by the seal, authorised by recovery keys (no shares returned).',
      fields: rekeyInitFields,
      unauthenticated: true,
      operations: {
        read: ({ engine }) => rawJson(engine.seal.rekey.status(recovery)),
        update: async ({ engine, data }) => rawJson(await engine.seal.rekey.init(recovery, data)),
        delete: ({ engine }) => {
          engine.seal.rekey.cancel(recovery);
        },
      },
    }),
    route({
      path: `${prefix}/update`,
      summary: `Give one part of the current ${what} to a rekey in progress`,
      fields: { key: keyField(), nonce: nonceField() },
      unauthenticated: true,
      operations: {
        update: async ({ engine, data }) => {
          if (!data.key) throw invalid("'key' must be specified in request body as JSON");
          const r = await engine.seal.rekey.update(recovery, data.key, data.nonce ?? '');
          if (!r) return rawJson(engine.seal.rekey.status(recovery));
          const { hex, b64 } = hexAndB64(r.keys);
          const body: Record<string, unknown> = {
            nonce: r.nonce,
            complete: true,
            keys: hex,
            keys_base64: b64,
            pgp_fingerprints: r.pgp_fingerprints,
            backup: r.backup,
            verification_required: r.verification_required,
          };
          if (r.verification_nonce) body.verification_nonce = r.verification_nonce;
          for (const k of r.keys) k.fill(0);
          return rawJson(body);
        },
      },
    }),
    route({
      path: `${prefix}/verify`,
      summary: `Verify the new ${what} shares of a rekey started with require_verification`,
      fields: { key: keyField(), nonce: nonceField() },
      unauthenticated: true,
      operations: {
        read: ({ engine }) => rawJson(engine.seal.rekey.verifyStatus(recovery)),
        update: async ({ engine, data }) => {
          if (!data.key) throw invalid("'key' must be specified in request body as JSON");
          const r = await engine.seal.rekey.verify(recovery, data.key, data.nonce ?? '');
          return rawJson(r ?? engine.seal.rekey.verifyStatus(recovery));
        },
        delete: ({ engine }) => {
          engine.seal.rekey.verifyRestart(recovery);
          return rawJson(engine.seal.rekey.verifyStatus(recovery));
        },
      },
    }),
  ];
}

/** Seal, init, unseal and rekey routes of the sys mount. */
export const sealRoutes: AnyRoute[] = [
  route({
    path: 'seal-status',
    summary: 'Seal status: type, shares (t of n), unseal progress and nonce, version, storage',
    fields: {},
    unauthenticated: true,
    allowSealed: true,
    // Vault answers seal-status with a bare JSON object (no envelope); clients read `sealed` at the top.
    operations: {
      read: async ({ engine }) => {
        // A sealed daemon on shared storage re-reads the seal config (another may have initialised it).
        if (engine.seal.isSealed()) await engine.seal.sealer.refresh();
        return rawJson(sealStatus(engine));
      },
    },
  }),
  route({
    path: 'init',
    summary:
      'Initialise storage: key shares (Shamir) or recovery key shares (auto seal) and the root token, returned once',
    description:
      'Shamir seal: the master key is split into secret_shares unseal keys, secret_threshold of which unseal; with keychain=true the OS keychain also keeps the master key so the daemon unseals itself at start. ' +
      'Auto seal (transit, pkcs11): the seal wraps the master key and recovery_shares/recovery_threshold split a recovery key instead. keyhold defaults to one share when both numbers are absent, and is unsealed right after init.',
    fields: {
      secret_shares: f.int('Number of unseal key shares (Shamir seal)'),
      secret_threshold: f.int('Shares needed to unseal (Shamir seal)'),
      stored_shares: f.int('Accepted for compatibility'),
      pgp_keys: f.strings(
        'OpenPGP public keys (base64 of the binary key), one per share: each unseal key is returned encrypted to its key',
      ),
      recovery_shares: f.int('Number of recovery key shares (auto seal)'),
      recovery_threshold: f.int('Recovery shares needed (auto seal)'),
      recovery_pgp_keys: f.strings('OpenPGP public keys, one per recovery share (auto seal)'),
      root_token_pgp_key: f.string(
        'OpenPGP public key (base64 of the binary key): the root token is returned encrypted to it',
      ),
      keychain: f
        .bool('Store the master key in the OS keychain so the daemon unseals at start (Shamir seal)')
        .default(true),
    },
    unauthenticated: true,
    allowSealed: true,
    operations: {
      read: async ({ engine }) => {
        if (engine.seal.isSealed()) await engine.seal.sealer.refresh();
        return rawJson({ initialized: engine.seal.isInitialized() });
      },
      update: async ({ engine, data }) => {
        if (engine.seal.isInitialized()) throw invalid('Vault is already initialized');
        const r = await engine.seal.init({ ...data, useKeychain: data.keychain });
        const keys = hexAndB64(r.keys);
        const body: Record<string, unknown> = { keys: keys.hex, keys_base64: keys.b64 };
        if (r.recoveryKeys.length) {
          const rk = hexAndB64(r.recoveryKeys);
          body.recovery_keys = rk.hex;
          body.recovery_keys_base64 = rk.b64;
        }
        body.root_token = data.root_token_pgp_key
          ? await engine.seal.sealer.pgpRootToken(r.rootToken, data.root_token_pgp_key)
          : r.rootToken;
        body.keychain = r.keychain;
        for (const k of [...r.keys, ...r.recoveryKeys]) k.fill(0);
        return rawJson(body);
      },
    },
  }),
  route({
    path: 'unseal',
    summary: 'Give one unseal key share (recovery share under an auto seal); unsealed once the threshold is met',
    fields: {
      key: keyField(),
      reset: f.bool('Forget the shares given so far'),
      migrate: f.bool('The key belongs to the seal being migrated away from (seal migration)'),
    },
    unauthenticated: true,
    allowSealed: true,
    operations: {
      update: async ({ engine, data }) => {
        if (data.reset) {
          engine.seal.resetUnseal();
          return rawJson(sealStatus(engine));
        }
        if (!data.key) throw invalid("'key' must be specified in request body as JSON, or 'reset' set to true");
        await engine.seal.submitUnsealKey(data.key, Boolean(data.migrate));
        return rawJson(sealStatus(engine));
      },
    },
  }),
  ...rekeyRoutes('rekey'),
  ...rekeyRoutes('rekey-recovery-key'),
  ...(['rekey/backup', 'rekey/recovery-key-backup'] as const).map((path) =>
    route({
      path,
      summary: `Read or delete the PGP-encrypted ${path === 'rekey/backup' ? 'unseal' : 'recovery'} key shares kept by a rekey with backup=true`,
      fields: {},
      sudo: true,
      operations: {
        read: async ({ engine }) => ({ data: { ...(await engine.seal.rekey.backup(path !== 'rekey/backup')) } }),
        delete: async ({ engine }) => {
          await engine.seal.rekey.deleteBackup(path !== 'rekey/backup');
        },
      },
    }),
  ),
];
